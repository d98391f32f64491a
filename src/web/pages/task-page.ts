import type { Account } from '../../store/accounts-repository.ts';
import type { Task } from '../../store/task-row.ts';
import { formatDate, html, plural } from '../html.ts';
import { renderPage } from '../layout.ts';
import type { WebTaskStatus } from '../task-status.ts';

export interface TaskPageState {
  account: Account;
  csrf: string;
  task: Task;
  status: WebTaskStatus;
  preview: boolean;
}

export function taskPage(state: TaskPageState): string {
  const { task, status } = state;
  const final = task.status === 'succeeded' || task.status === 'failed' || task.status === 'canceled';
  return renderPage({
    title: `Removal ${task.id}`,
    session: { account: state.account, csrf: state.csrf, section: 'remove' },
    scripts: ['/assets/web.js'],
    body: html`<h1>Removal <code>${task.id}</code></h1>
      <p class="hint">${formatDate(task.created_at)} · ${task.subject} · ${task.precision} precision · ${task.output_format.toUpperCase()} ·
        ${plural(task.credits, 'credit')}${state.preview ? ' · free-plan preview (at most 0.25 MP)' : ''}</p>
      <div class="task" data-task data-status-url="/app/tasks/${task.id}/status" data-final="${final ? 'true' : 'false'}">
        <p class="status-line" role="status" aria-live="polite" data-status-label>${status.label}</p>
        <div class="stage" data-stage data-bg="checker">
          <div class="frame" data-frame>
            <img class="after" data-after alt="Result: the image with its background removed" ${status.result ? html`src="${status.result.url}"` : ''}>
            <img class="before" data-before src="${task.image_url}" alt="Original image">
          </div>
          <div class="progress" data-progress ${final ? 'hidden' : ''}>
            <div class="progress-bar" role="progressbar" aria-label="Task progress" aria-valuemin="0" aria-valuemax="2" aria-valuenow="${task.status === 'processing' ? 1 : 0}" aria-valuetext="${status.label}" data-progress-bar>
              <span></span>
            </div>
          </div>
        </div>
        <div class="viewer-controls">
          <div class="control">
            <label for="compare">Before / after</label>
            <input id="compare" type="range" min="0" max="100" value="50" data-compare ${status.result ? '' : 'disabled'}>
          </div>
          <fieldset class="backgrounds">
            <legend>Background</legend>
            <div class="radio-row">
            <label><input type="radio" name="bg" value="checker" checked data-bg-choice> Transparent</label>
            <label><input type="radio" name="bg" value="white" data-bg-choice> White</label>
            <label><input type="radio" name="bg" value="black" data-bg-choice> Black</label>
            <label><input type="radio" name="bg" value="custom" data-bg-choice> Colour</label>
            <label class="visually-hidden" for="bg-colour">Custom background colour</label>
            <input id="bg-colour" type="color" value="#3b82f6" data-bg-colour>
            </div>
          </fieldset>
          <div class="control actions">
            <a class="button primary ${status.result ? '' : 'disabled'}" data-download ${status.result ? html`href="${status.result.url}" download="${status.result.download}"` : html`aria-disabled="true"`}>Download ${task.output_format.toUpperCase()}</a>
            <a class="button" href="/app/remove">Remove another</a>
          </div>
        </div>
        <p class="error" role="alert" data-error ${status.error ? '' : 'hidden'}>${status.error ? `${status.error.code}: ${status.error.message}` : ''}</p>
      </div>`,
  });
}
