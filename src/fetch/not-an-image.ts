// The two answers a client most often gets instead of an image, named so they can act on them:
// a web page (the link of a page that shows the photo, not of the photo) and nothing at all. The
// decoder would only say "not a recognisable image", which sends them looking at their file.
import { TaskError } from '../domain/errors.ts';

const htmlTypes = new Set(['text/html', 'application/xhtml+xml']);

/** Throws unsupported_image for an empty body or an HTML page; anything else is left to the decoder. */
export function refuseNonImage(contentType: string | undefined, data: Buffer): void {
  if (data.length === 0) throw new TaskError('unsupported_image', 'The image server sent an empty body, not an image.');
  // Both the label and the bytes must say HTML: an image served under a wrong Content-Type still
  // decodes, and only markup starts with "<" (SVG, which also does, is labelled image/svg+xml).
  const mediaType = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (htmlTypes.has(mediaType) && startsWithMarkup(data)) {
    throw new TaskError('unsupported_image', 'The image URL leads to a web page (HTML), not to an image file; use the address of the image itself.');
  }
}

function startsWithMarkup(data: Buffer): boolean {
  const text = data.subarray(0, 1024).toString('utf8').replace(/^\uFEFF/, '').trimStart();
  return text.startsWith('<');
}
