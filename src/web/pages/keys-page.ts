import type { Account } from '../../store/accounts-repository.ts';
import type { ApiKeyInfo } from '../../store/api-keys-repository.ts';
import { formatDate, html } from '../html.ts';
import { renderPage } from '../layout.ts';

export interface KeysPageState {
  account: Account;
  csrf: string;
  keys: ApiKeyInfo[];
  /** Only in the response to the create form: the full key, shown this once. */
  created?: { name: string; key: string };
  notice?: string;
  error?: string;
}

function accessBox(account: Account) {
  return account.apiAccess
    ? html`<div class="access ok" data-testid="api-access"><strong>API access: enabled.</strong>
        ${account.plan === 'paid' ? 'Your account is on the paid plan.' : 'Your account has bought credits.'}
        API requests draw on the same balance as the web app.</div>`
    : html`<div class="access no" data-testid="api-access"><strong>API access: not enabled.</strong>
        The API needs a paid plan or a credit purchase; free web credits cover the web app only.
        You can create keys now; they start working once the account has API access. See <a href="/app/credits">Credits</a>.</div>`;
}

export function keysPage(state: KeysPageState): string {
  const { created } = state;
  return renderPage({
    title: 'API keys',
    session: { account: state.account, csrf: state.csrf, section: 'keys' },
    scripts: ['/assets/web.js'],
    body: html`<h1>Account settings: API keys</h1>
      ${accessBox(state.account)}
      ${state.notice ? html`<p class="notice" role="status">${state.notice}</p>` : ''}
      ${state.error ? html`<p class="error" role="alert">${state.error}</p>` : ''}
      ${created
        ? html`<section class="card new-key" aria-labelledby="new-key-title">
            <h2 id="new-key-title">Your new key “${created.name}”</h2>
            <p><strong>Copy it now: it is shown only this once.</strong> We keep only a hash of it.</p>
            <div class="copy-row">
              <label for="new-key" class="visually-hidden">New API key</label>
              <input id="new-key" class="mono" type="text" readonly value="${created.key}" data-testid="new-key">
              <button type="button" class="primary" data-copy="#new-key">Copy</button>
            </div>
            <p class="hint" role="status" data-copy-status></p>
          </section>`
        : ''}
      <section class="card" aria-labelledby="create-title">
        <h2 id="create-title">Create a key</h2>
        <form method="post" action="/app/settings/keys" class="inline-form">
          <input type="hidden" name="_csrf" value="${state.csrf}">
          <label for="key-name">Name</label>
          <input id="key-name" name="name" type="text" required maxlength="100" placeholder="e.g. laptop, shop backend">
          <button type="submit" class="primary">Create key</button>
        </form>
      </section>
      <section class="card" aria-labelledby="list-title">
        <h2 id="list-title">Your keys</h2>
        ${state.keys.length === 0
          ? html`<p>No keys yet.</p>`
          : html`<table class="responsive">
              <thead><tr><th scope="col">Name</th><th scope="col">Key</th><th scope="col">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
              <tbody>
              ${state.keys.map(
                (k) => html`<tr data-testid="key-row">
                  <td data-label="Name">${k.name}</td>
                  <td data-label="Key"><code>${k.prefix}…</code></td>
                  <td data-label="Created">${formatDate(k.createdAt)}</td>
                  <td data-label="Last used">${k.lastUsedAt === null ? 'never' : formatDate(k.lastUsedAt)}</td>
                  <td>
                    <form method="post" action="/app/settings/keys/${k.id}/delete">
                      <input type="hidden" name="_csrf" value="${state.csrf}">
                      <button type="submit" class="danger" aria-label="Delete key ${k.name}">Delete</button>
                    </form>
                  </td>
                </tr>`,
              )}
              </tbody>
            </table>`}
      </section>
      <p class="hint">Use a key as <code>Authorization: Bearer cut_…</code> with the <a href="/docs">API</a>. A deleted key stops working at once.</p>`,
  });
}
