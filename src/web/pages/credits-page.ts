import type { Account, LedgerEntry } from '../../store/accounts-repository.ts';
import type { SafeHtml } from '../html.ts';
import { formatDate, html, plural } from '../html.ts';
import { renderPage } from '../layout.ts';

const kindText: Record<LedgerEntry['kind'], string> = {
  grant: 'Grant',
  purchase: 'Purchase',
  reserve: 'Reserved for a task',
  charge: 'Charged for a task',
  refund: 'Refunded (task failed)',
};

const signed = (n: number): string => (n > 0 ? `+${n}` : String(n));

/**
 * `ledger` is one page, newest first; `paged` is true past the first page, and `olderThan` names
 * the last entry shown when older ones follow.
 */
export function creditsPage(state: { account: Account; csrf: string; ledger: LedgerEntry[]; paged: boolean; olderThan: number | undefined; offer: SafeHtml }): string {
  const { account } = state;
  return renderPage({
    title: 'Credits',
    session: { account, csrf: state.csrf, section: 'credits' },
    body: html`<h1>Credits</h1>
      <section class="card balance-card" aria-labelledby="balance-title">
        <h2 id="balance-title">Balance</h2>
        <p class="big" data-testid="credits-available">${plural(account.creditsAvailable, 'credit')}</p>
        <p>${account.creditsReserved > 0 ? `${plural(account.creditsReserved, 'credit')} held for tasks in progress. ` : ''}
          A standard removal costs 1 credit, high precision 2, from the web app and the API alike.
          API access: <strong>${account.apiAccess ? 'enabled' : 'not enabled (needs a paid plan or a credit purchase)'}</strong>.</p>
      </section>
      <section class="card" aria-labelledby="get-title">
        <h2 id="get-title">Get credits</h2>
        ${state.offer}
      </section>
      <section class="card" aria-labelledby="ledger-title">
        <h2 id="ledger-title">Ledger</h2>
        <p class="hint">Newest first. “Available” is what you can spend; “held” is reserved while a task runs.</p>
        <table class="responsive" data-testid="ledger">
          <thead><tr><th scope="col">Date</th><th scope="col">Entry</th><th scope="col">Available</th><th scope="col">Held</th><th scope="col">Task</th></tr></thead>
          <tbody>
          ${state.ledger.map(
            (e) => html`<tr>
              <td data-label="Date">${formatDate(e.createdAt)}</td>
              <td data-label="Entry">${kindText[e.kind]}</td>
              <td data-label="Available">${signed(e.availableDelta)}</td>
              <td data-label="Held">${signed(e.reservedDelta)}</td>
              <td data-label="Task">${e.taskId ? html`<a href="/app/tasks/${e.taskId}">${e.taskId}</a>` : '—'}</td>
            </tr>`,
          )}
          </tbody>
        </table>
        ${state.paged || state.olderThan !== undefined
          ? html`<nav class="pager" aria-label="Ledger pages">
              ${state.paged ? html`<a href="/app/credits">Newest entries</a>` : ''}
              ${state.olderThan !== undefined ? html`<a href="/app/credits?before=${state.olderThan}">Older entries</a>` : ''}
            </nav>`
          : ''}
      </section>`,
  });
}
