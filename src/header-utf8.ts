// Node hands HTTP header values over as Latin-1, one character per byte. Clients and servers that
// put non-ASCII text in a header (an Idempotency-Key, a redirect's Location) mean UTF-8, as browsers
// read it; bytes that are not UTF-8 stay the Latin-1 characters Node made of them.
const utf8 = new TextDecoder('utf-8', { fatal: true });

/** The header value as its sender wrote it. */
export function headerText(value: string): string {
  if (/^[\x00-\x7f]*$/.test(value)) return value;
  try {
    return utf8.decode(Buffer.from(value, 'latin1'));
  } catch {
    return value;
  }
}
