// A minimal browser stand-in for HTTP-level tests: keeps cookies, reads the CSRF token from the
// last page, sends forms (urlencoded or multipart), and does not follow redirects on its own.

export class WebClient {
  readonly cookies = new Map<string, string>();
  /** Set-Cookie headers as received, for checking cookie attributes. */
  readonly setCookies: string[] = [];
  csrf = '';

  /** `headers` go with every request: X-Forwarded-* as a reverse proxy in front would add them. */
  constructor(
    private readonly baseUrl: string,
    private readonly headers: Record<string, string> = {},
  ) {}

  private remember(response: Response): void {
    for (const header of response.headers.getSetCookie()) {
      this.setCookies.push(header);
      const [pair = '', ...attributes] = header.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => /^\s*max-age=0\s*$/i.test(a)) || attributes.some((a) => /^\s*expires=/i.test(a) && Date.parse(a.split('=')[1] ?? '') < Date.now());
      if (expired || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  /** The Cookie header this client sends, for requests made outside it (raw sockets, plain fetch). */
  cookieHeader(): string {
    return [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  }

  private requestHeaders(extra: Record<string, string> = {}): Record<string, string> {
    const cookie = this.cookieHeader();
    return { ...this.headers, ...(cookie ? { cookie } : {}), ...extra };
  }

  async get(pathname: string): Promise<{ response: Response; body: string }> {
    const response = await fetch(`${this.baseUrl}${pathname}`, { headers: this.requestHeaders(), redirect: 'manual' });
    this.remember(response);
    const body = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(body);
    if (token?.[1]) this.csrf = token[1];
    return { response, body };
  }

  /** Posts a form with the current CSRF token unless `_csrf` is given (null leaves it out). */
  async post(pathname: string, fields: Record<string, string | null>, file?: { name: string; data: Buffer; type: string }): Promise<{ response: Response; body: string }> {
    const all: Record<string, string> = {};
    if (!('_csrf' in fields)) all._csrf = this.csrf;
    for (const [k, v] of Object.entries(fields)) if (v !== null) all[k] = v;
    let body: BodyInit;
    const headers: Record<string, string> = {};
    if (file) {
      const form = new FormData();
      for (const [k, v] of Object.entries(all)) form.append(k, v);
      form.append('file', new Blob([new Uint8Array(file.data)], { type: file.type }), file.name);
      body = form;
    } else {
      body = new URLSearchParams(all).toString();
      headers['content-type'] = 'application/x-www-form-urlencoded';
    }
    const response = await fetch(`${this.baseUrl}${pathname}`, { method: 'POST', headers: this.requestHeaders(headers), body, redirect: 'manual' });
    this.remember(response);
    const text = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(text);
    if (token?.[1]) this.csrf = token[1];
    return { response, body: text };
  }

  /** Signs up from a fresh sign-up page; returns the response of the form post. */
  async signUp(email: string, password: string): Promise<Response> {
    await this.get('/sign-up');
    return (await this.post('/sign-up', { email, password })).response;
  }
}

let n = 0;
export const uniqueEmail = (): string => `web${++n}-${Date.now()}@example.test`;
export const goodPassword = 'correct horse battery staple';
