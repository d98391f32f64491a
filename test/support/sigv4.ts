// Checks an AWS Signature Version 4 presigned URL from first principles (AWS's published
// algorithm, node:crypto only). s3rver checks the expiry of a presigned URL but not its signature,
// so the tests verify the signature here, independently of the SDK that made it.
import { createHash, createHmac } from 'node:crypto';

const encode = (s: string): string => encodeURIComponent(s).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
const hmac = (key: Buffer | string, data: string): Buffer => createHmac('sha256', key).update(data).digest();

export function presignedSignatureIsValid(url: URL, credentials: { accessKeyId: string; secretAccessKey: string }, method = 'GET'): boolean {
  const query = [...url.searchParams.entries()];
  const get = (name: string): string => url.searchParams.get(name) ?? '';
  const [keyId, date, region, service] = get('X-Amz-Credential').split('/');
  if (get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256' || keyId !== credentials.accessKeyId || !date || !region || !service) return false;
  const canonicalQuery = query
    .filter(([name]) => name !== 'X-Amz-Signature')
    .map(([name, value]) => [encode(name), encode(value)] as const)
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}=${value}`)
    .join('&');
  const signedHeaders = get('X-Amz-SignedHeaders');
  if (signedHeaders !== 'host') return false;
  const canonicalPath = url.pathname.split('/').map((segment) => encode(decodeURIComponent(segment))).join('/');
  const canonicalRequest = [method, canonicalPath, canonicalQuery, `host:${url.host}\n`, signedHeaders, 'UNSIGNED-PAYLOAD'].join('\n');
  const scope = `${date}/${region}/${service}/aws4_request`;
  const stringToSign = ['AWS4-HMAC-SHA256', get('X-Amz-Date'), scope, createHash('sha256').update(canonicalRequest).digest('hex')].join('\n');
  let key: Buffer = hmac(`AWS4${credentials.secretAccessKey}`, date);
  for (const part of [region, service, 'aws4_request']) key = hmac(key, part);
  return hmac(key, stringToSign).toString('hex') === get('X-Amz-Signature');
}
