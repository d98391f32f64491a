import type { Account } from '../../store/accounts-repository.ts';
import { html } from '../html.ts';
import { renderPage } from '../layout.ts';

export interface RemovePageState {
  account: Account;
  csrf: string;
  maxSize: string;
  error?: string;
  imageUrl?: string;
}

export function removePage(state: RemovePageState): string {
  const { account } = state;
  return renderPage({
    title: 'Remove a background',
    session: { account, csrf: state.csrf, section: 'remove' },
    scripts: ['/assets/web.js'],
    body: html`<h1>Remove a background</h1>
      <p class="hint">${account.apiAccess
        ? 'Results come at the full resolution of your image.'
        : 'On the free plan, web results are previews of at most 0.25 megapixels. A paid plan or a credit purchase gives full resolution.'}</p>
      ${state.error ? html`<p class="error" role="alert" id="remove-error">${state.error}</p>` : ''}
      <form method="post" action="/app/removals" enctype="multipart/form-data" class="card remove-form" data-remove-form>
        <input type="hidden" name="_csrf" value="${state.csrf}">
        <fieldset>
          <legend>Image</legend>
          <label class="dropzone" for="file" data-dropzone>
            <span class="dropzone-text" data-dropzone-text>Drop an image here, or choose a file</span>
            <span class="hint">JPEG, PNG, WebP, GIF, AVIF or TIFF, up to ${state.maxSize}</span>
            <input id="file" name="file" type="file" accept="image/jpeg,image/png,image/webp,image/gif,image/avif,image/tiff">
          </label>
          <p class="or" aria-hidden="true">or</p>
          <label for="image_url">Paste a public image URL</label>
          <input id="image_url" name="image_url" type="url" inputmode="url" placeholder="https://example.com/photo.jpg" value="${state.imageUrl ?? ''}">
        </fieldset>
        <fieldset class="options">
          <legend>Options</legend>
          <div>
            <label for="subject">Subject</label>
            <select id="subject" name="subject">
              <option value="auto" selected>Automatic</option>
              <option value="product">Product</option>
              <option value="portrait">Portrait</option>
              <option value="hair">Hair</option>
            </select>
          </div>
          <div>
            <label for="precision">Precision</label>
            <select id="precision" name="precision" data-precision>
              <option value="standard" selected>Standard (1 credit)</option>
              <option value="high">High (2 credits)</option>
            </select>
          </div>
          <div>
            <label for="output_format">Format</label>
            <select id="output_format" name="output_format">
              <option value="png" selected>PNG</option>
              <option value="webp">WebP (lossless)</option>
            </select>
          </div>
        </fieldset>
        <button type="submit" class="primary big-button" data-submit>Remove background (<span data-cost>1 credit</span>)</button>
      </form>`,
  });
}
