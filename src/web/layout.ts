// The page shell: head, navigation with the balance, sign-out form, and the main landmark.
import type { Account } from '../store/accounts-repository.ts';
import { html, plural, type SafeHtml } from './html.ts';

export type Section = 'remove' | 'history' | 'credits' | 'keys';

const sections: [Section, string, string][] = [
  ['remove', '/app/remove', 'Remove a background'],
  ['history', '/app/history', 'History'],
  ['credits', '/app/credits', 'Credits'],
  ['keys', '/app/settings/keys', 'API keys'],
];

export interface PageOptions {
  title: string;
  body: SafeHtml;
  /** Signed-in pages get the navigation; the CSRF token is for the sign-out form. */
  session?: { account: Account; csrf: string; section?: Section };
  scripts?: string[];
}

export function renderPage(options: PageOptions): string {
  const { session } = options;
  const nav = session
    ? html`<nav aria-label="Main">
        <ul class="nav-links">
          ${sections.map(
            ([id, href, label]) => html`<li><a href="${href}" ${id === session.section ? html`aria-current="page"` : ''}>${label}</a></li>`,
          )}
        </ul>
        <div class="nav-account">
          <span class="balance" data-testid="balance">${plural(session.account.creditsAvailable, 'credit')}</span>
          <span class="plan">${session.account.plan === 'paid' ? 'Paid plan' : session.account.apiAccess ? 'Free plan · API access' : 'Free plan'}</span>
          <form method="post" action="/sign-out">
            <input type="hidden" name="_csrf" value="${session.csrf}">
            <button type="submit" class="link-button">Sign out</button>
          </form>
        </div>
      </nav>`
    : '';
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · Cutout</title>
<link rel="stylesheet" href="/assets/web.css">
${(options.scripts ?? []).map((src) => html`<script src="${src}" defer></script>`)}
</head>
<body>
<a class="skip-link" href="#main">Skip to content</a>
<header class="site-header">
  <a class="brand" href="${session ? '/app/remove' : '/'}">Cutout</a>
  ${nav}
</header>
<main id="main" tabindex="-1">
${options.body}
</main>
</body>
</html>`.value;
}
