import type { Account } from '../../store/accounts-repository.ts';
import type { HistoryEntry } from '../../store/web-tasks-repository.ts';
import { formatDate, html } from '../html.ts';
import { renderPage } from '../layout.ts';

function cost(entry: HistoryEntry): string {
  const { task } = entry;
  if (task.status === 'succeeded') return `${task.credits} charged`;
  if (task.status === 'failed' || task.status === 'canceled') return '0 (refunded)';
  return `${task.credits} held`;
}

export function historyPage(state: { account: Account; csrf: string; entries: HistoryEntry[]; downloads: Map<string, string> }): string {
  return renderPage({
    title: 'History',
    session: { account: state.account, csrf: state.csrf, section: 'history' },
    body: html`<h1>History</h1>
      <p class="hint">Your most recent tasks from the web app and the API. Results can be downloaded until they are deleted after the retention period.</p>
      ${state.entries.length === 0
        ? html`<p class="card">No tasks yet. <a href="/app/remove">Remove a background</a>.</p>`
        : html`<table class="responsive history" data-testid="history">
            <thead><tr><th scope="col">Result</th><th scope="col">Task</th><th scope="col">Created</th><th scope="col">From</th><th scope="col">Status</th><th scope="col">Cost</th><th scope="col">Download</th></tr></thead>
            <tbody>
            ${state.entries.map(({ task, origin }) => {
              const download = state.downloads.get(task.id);
              const retained = download !== undefined;
              return html`<tr data-testid="history-row" data-task-id="${task.id}">
                <td data-label="Result" class="thumb-cell">${retained
                  ? html`<img class="thumb" src="/app/tasks/${task.id}/thumbnail" width="64" height="64" alt="Thumbnail of ${task.id}" loading="lazy">`
                  : html`<span class="thumb placeholder" aria-hidden="true"></span>`}</td>
                <td data-label="Task"><a href="/app/tasks/${task.id}"><code>${task.id}</code></a></td>
                <td data-label="Created">${formatDate(task.created_at)}</td>
                <td data-label="From">${origin === 'web' ? 'Web' : 'API'}</td>
                <td data-label="Status"><span class="badge ${task.status}">${task.status}</span></td>
                <td data-label="Cost">${cost({ task, origin })}</td>
                <td data-label="Download">${download
                  ? html`<a href="${download}" download="cutout-${task.id}.${task.output_format}">${task.output_format.toUpperCase()}</a>`
                  : task.status === 'succeeded' ? 'deleted' : '—'}</td>
              </tr>`;
            })}
            </tbody>
          </table>`}`,
  });
}
