// The decisions taken where the interface specification says "not shown". The README repeats
// them; tests check that both mention each one.
import type { Config } from '../config.ts';

export function apiDescription(config: Config): string {
  return [
    'Asynchronous background removal: create a task from a public image URL, poll it every 2–5 s, download the cutout.',
    '',
    '## Decisions where the specification is silent',
    '- **`hd`** is accepted and echoed as `precision: "high"`; both cost 2 credits.',
    '- **Failed task `error`**: `{ code, message }` with codes `image_url_forbidden`, `image_download_failed`, `image_too_large`, `unsupported_image`, `processing_failed` (see the `BgRemovalError` schema).',
    '- **`canceled`** is never set by this version: there is no cancel operation.',
    '- **Validation** (400 `invalid_request`): unknown fields are refused and named; a `model` other than `bg-remover` is refused; `image_url` must be an absolute http(s) URL of at most 2048 characters, without control characters (U+0000–U+001F, U+007F–U+009F: a URL parser would drop or encode them, so the address fetched would not be the one sent) or unpaired surrogates; the body must be a JSON object sent as `application/json` (multipart is refused with a message that upload is not available in this version). An unreachable or forbidden image URL is not a 400: the task is accepted and then fails with a task error code, and its credits are refunded.',
    `- **Rate limit**: ${config.rateLimitPerMinute} requests per minute per API key, over all endpoints (fixed one-minute windows). Every authenticated response carries \`X-RateLimit-Limit\`, \`X-RateLimit-Remaining\` and \`X-RateLimit-Reset\` (Unix time in seconds when the window resets); every 429 carries \`Retry-After\` in seconds. With PostgreSQL the count is kept in the database, so it holds across every API process serving it; with SQLite it is kept in the memory of the one API process.`,
    `- **Concurrency limit**: at most ${config.maxActiveTasks} tasks per account queued or processing at once (429 \`concurrency_limit\`, \`Retry-After: 5\`).`,
    `- **Source images**: JPEG, PNG, WebP, GIF (first frame), AVIF and TIFF; SVG, HEIC (HEIF coded with HEVC, which this build cannot decode) and anything else are refused (\`unsupported_image\`). At most ${config.fetch.maxBytes} bytes, ${config.maxPixels} decoded pixels (checked from the header before decoding), ${config.fetch.maxRedirects} redirects and ${config.fetch.timeoutMs / 1000} s per download. EXIF orientation is applied; the result has the upright width and height.`,
    `- **Result URL lifetime**: ${config.resultUrlTtlSeconds} s from the GET that returned it; every GET returns a freshly signed URL. Results are kept ${config.resultRetentionHours} h after the task finished; after that the task still reads \`succeeded\` with its \`usage\`, but \`output.url\` and \`output.expires_at\` are \`null\`.`,
    '- **Idempotency keys** are scoped to the account and kept at least 24 hours; a replay answers 202 with the original task and the header `Idempotent-Replayed: true`.',
    '- **Check order** on create: API key (401) → rate limit (429) → API access (403) → request (400) → idempotency (409/replay) → active tasks (429) → credits (402).',
    '- **Ids and URLs that cannot name anything**: a task id not of the form `bgr_` and 20 lowercase letters and digits (one whose percent-encoding does not decode, or longer than 100 characters, included) gets 404 `task_not_found` after the API key and rate-limit checks, like an unknown id. A result URL whose path does not decode, or with `expires` or `signature` given twice, gets 403 `result_url_invalid`; any other path whose percent-encoding does not decode gets 400 `invalid_request`.',
    '- **Requests the HTTP parser refuses** keep their status, with the Error body, code `invalid_request` and a request id: 431 for headers over 16 KB, 408 for headers not received in time, 400 for anything else it cannot parse (a control character in a header, two `Content-Length` headers).',
    '- **Tasks made in the web app** are ordinary tasks of the account, readable here. For an uploaded file, `input.image_url` is `<server>/app/uploads/upl_…`, which shows the upload to its signed-in owner only; a free-plan web task is a preview of at most 0.25 megapixels, so its `output` size is smaller than the source.',
    '- **Events / webhooks**: none in this version; poll the task.',
    '- **Compatibility**: fields may be added to responses within v1; clients must ignore unknown fields. Removing or renaming a field needs a new version path.',
  ].join('\n');
}
