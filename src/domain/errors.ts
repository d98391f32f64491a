// Errors are values with a stable code. API errors map to an HTTP status and the spec's Error
// body; task errors end up in a failed task's `error` object. Both catalogues are documented in
// the README and the OpenAPI description, and a test keeps them in step.

export const apiErrors = {
  invalid_request: { status: 400, description: 'Invalid request parameters.' },
  invalid_api_key: { status: 401, description: 'Missing, invalid, or deleted API key.' },
  insufficient_credits: { status: 402, description: 'Not enough credits.' },
  api_access_required: { status: 403, description: 'No paid plan or credit purchase.' },
  task_not_found: { status: 404, description: 'Task not found or belongs to another user.' },
  idempotency_conflict: { status: 409, description: 'Idempotency key reused with a different request.' },
  rate_limit_exceeded: { status: 429, description: 'Too many requests.' },
  concurrency_limit: { status: 429, description: 'Too many jobs in progress.' },
  result_url_invalid: { status: 403, description: 'The result URL signature is missing or does not match.' },
  result_url_expired: { status: 410, description: 'The result URL has expired; GET the task for a fresh one.' },
  result_not_found: { status: 404, description: 'The result was deleted after the retention period, or never existed.' },
  precondition_failed: { status: 412, description: 'The If-Match or If-Unmodified-Since of a result download names another version of the file.' },
  range_not_satisfiable: { status: 416, description: 'The Range header asks for bytes beyond the end of the result.' },
  not_found: { status: 404, description: 'No such route.' },
  internal_error: { status: 500, description: 'Unexpected server error.' },
  service_unavailable: { status: 503, description: 'The service\'s database or storage cannot be reached or is busy just now; send the request again after Retry-After seconds.' },
} as const;

export type ApiErrorCode = keyof typeof apiErrors;

export class ApiError extends Error {
  constructor(
    readonly code: ApiErrorCode,
    message: string,
    readonly headers: Record<string, string> = {},
    // Another status than the code's where HTTP names a more precise one for the same refusal
    // (415 for a body in a coding the server does not read).
    readonly status: number = apiErrors[code].status,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

export const taskErrors = {
  image_url_forbidden: 'The image URL points to an address the service may not fetch (private, loopback, link-local, ...), or uses a scheme other than http/https.',
  image_download_failed: 'The image could not be downloaded: DNS failure, connection error, a status other than 200 (or 203), too many redirects, or a timeout.',
  image_too_large: 'The image exceeds the byte limit or the decoded pixel limit, has a side over 65535 pixels, or has a side over 16383 pixels with `output_format` `webp` (the WebP limit).',
  unsupported_image: 'The downloaded data is not a supported image (JPEG, PNG, WebP, GIF, AVIF, TIFF; SVG is refused).',
  processing_failed: 'Background removal failed inside the service, or the task was abandoned by workers more times than allowed.',
} as const;

export type TaskErrorCode = keyof typeof taskErrors;

export class TaskError extends Error {
  constructor(
    readonly code: TaskErrorCode,
    message: string,
  ) {
    super(message);
    this.name = 'TaskError';
  }
}

/**
 * The service's own storage (the result store, the store of web uploads, or the database a task's
 * source is looked up in) failed, unreachable or refusing, for as long as a lease lasts. Not the
 * task's fault: the attempt goes back to the queue, and the task fails only when every allowed
 * attempt met the same outage.
 */
export class StoreUnavailableError extends Error {
  constructor(
    readonly what: string,
    cause: unknown,
  ) {
    super(`${what} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = 'StoreUnavailableError';
  }
}
