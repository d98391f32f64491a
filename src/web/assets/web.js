// Progressive enhancement for the Cutout pages: copy buttons, drag-and-drop, the credit cost on
// the submit button, and the task page's status polling and result viewer. Every page works
// without it except the live status, which a reload also shows.
'use strict';

document.querySelectorAll('[data-copy]').forEach((button) => {
  button.addEventListener('click', async () => {
    const source = document.querySelector(button.getAttribute('data-copy'));
    const status = document.querySelector('[data-copy-status]');
    try {
      await navigator.clipboard.writeText(source.value);
      if (status) status.textContent = 'Copied to the clipboard.';
    } catch {
      source.select();
      if (status) status.textContent = 'Select the key and copy it with your keyboard (Ctrl+C or Cmd+C).';
    }
  });
});

const form = document.querySelector('[data-remove-form]');
if (form) {
  const zone = form.querySelector('[data-dropzone]');
  const input = form.querySelector('input[type=file]');
  const text = form.querySelector('[data-dropzone-text]');
  const precision = form.querySelector('[data-precision]');
  const cost = form.querySelector('[data-cost]');
  const showName = () => {
    text.textContent = input.files && input.files.length > 0 ? `Selected: ${input.files[0].name}` : 'Drop an image here, or choose a file';
  };
  input.addEventListener('change', showName);
  ['dragenter', 'dragover'].forEach((type) =>
    zone.addEventListener(type, (event) => {
      event.preventDefault();
      zone.classList.add('dragover');
    }),
  );
  ['dragleave', 'drop'].forEach((type) => zone.addEventListener(type, () => zone.classList.remove('dragover')));
  zone.addEventListener('drop', (event) => {
    event.preventDefault();
    if (event.dataTransfer && event.dataTransfer.files.length > 0) {
      input.files = event.dataTransfer.files;
      showName();
    }
  });
  precision.addEventListener('change', () => {
    cost.textContent = precision.value === 'high' ? '2 credits' : '1 credit';
  });
  form.addEventListener('submit', () => {
    const submit = form.querySelector('[data-submit]');
    submit.disabled = true;
    submit.textContent = 'Uploading…';
  });
}

const task = document.querySelector('[data-task]');
if (task) {
  const stage = task.querySelector('[data-stage]');
  const frame = task.querySelector('[data-frame]');
  const before = task.querySelector('[data-before]');
  const after = task.querySelector('[data-after]');
  const label = task.querySelector('[data-status-label]');
  const progress = task.querySelector('[data-progress]');
  const bar = task.querySelector('[data-progress-bar]');
  const compare = task.querySelector('[data-compare]');
  const download = task.querySelector('[data-download]');
  const error = task.querySelector('[data-error]');
  const colour = task.querySelector('[data-bg-colour]');
  const balance = document.querySelector('[data-testid=balance]');

  // The frame is sized to the image inside the fixed-size stage, so the page never moves.
  const fit = () => {
    const img = after.naturalWidth ? after : before;
    if (!img.naturalWidth) return;
    const box = stage.getBoundingClientRect();
    const scale = Math.min(box.width / img.naturalWidth, box.height / img.naturalHeight);
    frame.style.width = `${Math.floor(img.naturalWidth * scale)}px`;
    frame.style.height = `${Math.floor(img.naturalHeight * scale)}px`;
  };
  before.addEventListener('load', fit);
  after.addEventListener('load', fit);
  window.addEventListener('resize', fit);
  fit();

  const setBackground = () => {
    const choice = task.querySelector('[data-bg-choice]:checked').value;
    stage.dataset.bg = choice;
    frame.style.backgroundColor = choice === 'custom' ? colour.value : '';
  };
  task.querySelectorAll('[data-bg-choice]').forEach((radio) => radio.addEventListener('change', setBackground));
  colour.addEventListener('input', () => {
    task.querySelector('[data-bg-choice][value=custom]').checked = true;
    setBackground();
  });
  compare.addEventListener('input', () => frame.style.setProperty('--pos', `${compare.value}%`));

  const show = (status) => {
    label.textContent = status.label;
    if (balance) balance.textContent = status.balanceLabel;
    bar.setAttribute('aria-valuenow', status.status === 'processing' ? '1' : status.status === 'queued' ? '0' : '2');
    bar.setAttribute('aria-valuetext', status.label);
    if (status.status === 'succeeded' || status.status === 'failed' || status.status === 'canceled') progress.hidden = true;
    if (status.result) {
      if (after.getAttribute('src') !== status.result.url && !after.getAttribute('src')) after.src = status.result.url;
      download.href = status.result.url;
      download.setAttribute('download', status.result.download);
      download.classList.remove('disabled');
      download.removeAttribute('aria-disabled');
      compare.disabled = false;
      task.classList.add('done');
    }
    if (status.error) {
      error.hidden = false;
      error.textContent = `${status.error.code}: ${status.error.message}`;
    }
  };

  const poll = async () => {
    try {
      const response = await fetch(task.dataset.statusUrl, { headers: { accept: 'application/json' }, credentials: 'same-origin' });
      if (response.status === 401) {
        // The session ended (expired, or signed out in another tab): polling stops, and the
        // sign-in page takes its place and brings the visitor back to this task afterwards.
        window.location.assign(`/sign-in?next=${encodeURIComponent(window.location.pathname)}`);
        return;
      }
      if (response.ok) {
        const status = await response.json();
        show(status);
        if (status.status === 'succeeded' || status.status === 'failed' || status.status === 'canceled') {
          task.dataset.final = 'true';
          return;
        }
      }
    } catch {
      // A dropped connection is retried at the next tick.
    }
    setTimeout(poll, 1000);
  };
  if (task.dataset.final === 'true') task.classList.toggle('done', Boolean(download.getAttribute('href')));
  else poll();
}
