// The token of an `Authorization: Bearer <token>` header. RFC 9110 §11.4 and RFC 6750 §2.1 put
// 1*SP between the scheme and the token, so any number of spaces is the same header; a tab, or
// anything after the token, is not this syntax.
const bearer = /^Bearer +([^\s]+)$/i;

export function bearerToken(header: string | undefined): string | undefined {
  return bearer.exec(header?.trim() ?? '')?.[1];
}
