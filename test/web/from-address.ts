// A sign-up sent from another loopback address, which the server sees as another client (fetch
// cannot choose the address it connects from, so this uses node's http client).
import http from 'node:http';
import { goodPassword } from './web-client.ts';

export interface Answer {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

/** `headers` go with both requests, as a client would send them (X-Forwarded-* included). */
export async function signUpFrom(baseUrl: string, localAddress: string, email: string, headers: Record<string, string> = {}): Promise<Answer> {
  const page = await request(`${baseUrl}/sign-up`, localAddress, headers);
  const cookie = (page.headers['set-cookie'] ?? []).map((c) => c.split(';')[0]).join('; ');
  const csrf = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
  const body = new URLSearchParams({ _csrf: csrf, email, password: goodPassword }).toString();
  return request(`${baseUrl}/sign-up`, localAddress, { ...headers, cookie, 'content-type': 'application/x-www-form-urlencoded' }, body);
}

function request(url: string, localAddress: string, headers: Record<string, string>, body?: string): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: body === undefined ? 'GET' : 'POST', headers, localAddress }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}
