import { recordSample } from './api-samples.js';

/**
 * A response's status, headers and text, and its JSON when the text parses (else undefined). Given the
 * request's method, the JSON answer is kept for the OpenAPI check when API_SAMPLES is set
 * (test/helpers/api-samples.ts).
 */
export async function readReply(res: Response, method?: string) {
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  if (method) recordSample(method, res.url, res.status, text, json);
  return { status: res.status, headers: res.headers, text, json };
}

/**
 * A small HTTP client over fetch with a cookie jar, like one browser profile. Sends Origin equal to the
 * server's own origin unless told otherwise.
 */
export class Browser {
  readonly cookies = new Map<string, string>();
  accessToken?: string;

  constructor(readonly baseUrl: string) {}

  async request(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; raw?: string } = {}) {
    const headers: Record<string, string> = { origin: new URL(this.baseUrl).origin, ...opts.headers };
    if (this.cookies.size && !('cookie' in headers)) {
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    }
    if (this.accessToken && !('authorization' in headers)) headers.authorization = `Bearer ${this.accessToken}`;
    let body: string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body, redirect: 'manual' });
    for (const c of res.headers.getSetCookie()) {
      const [pair, ...attrs] = c.split(';');
      const eq = pair.indexOf('=');
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some((a) => /max-age=0|max-age=-/i.test(a.trim())) || value === '';
      if (expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
    return { ...(await readReply(res, method)), setCookies: res.headers.getSetCookie() };
  }

  get(path: string, headers?: Record<string, string>) {
    return this.request('GET', path, { headers });
  }
  post(path: string, body?: unknown, headers?: Record<string, string>) {
    return this.request('POST', path, { body, headers });
  }
  delete(path: string, headers?: Record<string, string>) {
    return this.request('DELETE', path, { headers });
  }

  /** Logs in with a password and keeps the access token for later calls. */
  async login(username: string, password: string) {
    const r = await this.post('/api/user/login', { username, password });
    if (r.json?.data?.access_token) this.accessToken = r.json.data.access_token;
    return r;
  }
}
