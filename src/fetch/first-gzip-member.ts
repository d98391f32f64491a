// Where the compressed data of a gzip body's first member starts (RFC 1952 §2.3), so that it can be
// inflated on its own. Browsers decode a gzip body's first member and ignore whatever follows it (a
// stray newline a server appends, a second member cut short); Node's gunzip reads the bytes after
// a member as the next member and fails the whole body on them.

const FHCRC = 0x02;
const FEXTRA = 0x04;
const FNAME = 0x08;
const FCOMMENT = 0x10;

/** The deflate data after the first member's header, or undefined when the body does not start with a gzip header. */
export function firstMemberDeflate(body: Buffer): Buffer | undefined {
  if (body.length < 10 || body[0] !== 0x1f || body[1] !== 0x8b || body[2] !== 8) return undefined;
  const flags = body[3]!;
  let at = 10;
  if (flags & FEXTRA) {
    if (at + 2 > body.length) return undefined;
    at += 2 + body.readUInt16LE(at);
  }
  for (const flag of [FNAME, FCOMMENT]) {
    if (!(flags & flag)) continue;
    const end = body.indexOf(0, at);
    if (end === -1) return undefined;
    at = end + 1;
  }
  if (flags & FHCRC) at += 2;
  return at > body.length ? undefined : body.subarray(at);
}
