// The remove form's multipart body, read into what the route validates: a field's value, a file's
// bytes, and an array for a name sent more than once (the shape of @fastify/multipart's
// 'keyValues' body). Read here rather than by the plugin's attachFieldsToBody for two refusals it
// does not make: busboy cuts a field past its fieldSize short without an error (a long pasted URL
// became a task for its first 4 KB), and reports a body that is not the multipart it claims (no
// boundary, no closing boundary) as a plain Error, which the page answered as a server error.
import type { FastifyRequest } from 'fastify';
import { formatBytes } from './html.ts';

/**
 * The longest field the form takes: the longest image URL (2048 code points, up to 4 bytes each in
 * UTF-8) with room for the white space around it that the form trims.
 */
export const formFieldMaxBytes = 16 * 1024;

/** A form body refused as the request's fault; the web app's error handler answers its status. */
export class FormRefusedError extends Error {
  constructor(
    readonly code: 'form_field_too_long' | 'form_unreadable',
    readonly statusCode: 400 | 413,
    message: string,
  ) {
    super(message);
  }
}

/** A preValidation hook: sets request.body from a multipart request. */
export async function readUploadForm(request: FastifyRequest): Promise<void> {
  if (!request.isMultipart()) return;
  const values = new Map<string, unknown[]>();
  const add = (name: string, value: unknown) => values.set(name, [...(values.get(name) ?? []), value]);
  try {
    for await (const part of request.parts()) {
      if (part.type === 'file') add(part.fieldname, await part.toBuffer());
      else if (part.valueTruncated) throw new FormRefusedError('form_field_too_long', 413, `A form field is longer than ${formatBytes(formFieldMaxBytes)}.`);
      else add(part.fieldname, part.value);
    }
  } catch (err) {
    // The plugin's own refusals carry their status (413 for a file past the limit), and a body the
    // client stopped sending is its connection's error (client-abort.ts): both are answered as they are.
    if (err instanceof FormRefusedError || (err as { statusCode?: unknown }).statusCode !== undefined || err === request.raw.errored) throw err;
    throw new FormRefusedError('form_unreadable', 400, `The form could not be read: ${(err as Error).message}.`);
  }
  request.body = Object.fromEntries([...values].map(([name, list]) => [name, list.length === 1 ? list[0] : list]));
}
