// A small typed client over the generated operation table: call('A25', { body }) checks the body, path
// and query types against the registry, unwraps the {success, message, code, data} envelope and answers
// `data` with the type of the operation's documented answer.
import { lang } from './i18n';

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly data?: unknown,
  ) {
    super(message);
  }
}

type Shape = { params: unknown; query: unknown; body: unknown; data: unknown };
export type Args<O extends Shape> = {
  headers?: Record<string, string>;
} & (O['params'] extends undefined ? { params?: undefined } : { params: O['params'] }) &
  (O['body'] extends undefined ? { body?: undefined } : { body: O['body'] }) & { query?: Partial<O['query']> };

export interface ClientOptions {
  /** Authorization header value, if any. */
  auth?: () => string | null;
  /** Called once on a 401: true when the caller may retry (for example after a token refresh). */
  onUnauthorized?: () => Promise<boolean>;
}

export function createClient<Ops extends { [K in keyof Ops]: Shape }>(routes: Record<keyof Ops & string, readonly [string, string]>, opts: ClientOptions = {}) {
  async function send(id: keyof Ops & string, args: any, retry: boolean): Promise<any> {
    const [method, template] = routes[id];
    let url = template.replace(/\{(\w+)\}/g, (_, k) => encodeURIComponent(String(args.params?.[k] ?? '')));
    const q = new URLSearchParams();
    for (const [k, v] of Object.entries(args.query ?? {})) if (v !== undefined && v !== null && v !== '') q.set(k, String(v));
    if ([...q].length) url += `?${q}`;
    const headers: Record<string, string> = { accept: 'application/json', 'accept-language': lang.value === 'zh' ? 'zh-CN' : 'en', ...args.headers };
    const token = opts.auth?.();
    if (token) headers.authorization = token;
    let body: string | undefined;
    if (args.body !== undefined || method === 'POST' || method === 'PUT') {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(args.body ?? {});
    }
    const res = await fetch(url, { method, headers, body, credentials: 'same-origin' });
    let json: any;
    try {
      json = await res.json();
    } catch {
      throw new ApiError(`HTTP ${res.status}`, 'HTTP_ERROR', res.status);
    }
    if (res.status === 401 && retry && opts.onUnauthorized && (await opts.onUnauthorized())) return send(id, args, false);
    if (!res.ok || json?.success === false) {
      // A few answers (the channel test) carry their code as error_code.
      throw new ApiError(json?.message || `HTTP ${res.status}`, json?.code ?? json?.error_code ?? 'HTTP_ERROR', res.status, json?.data);
    }
    return json?.data;
  }
  return {
    /** Calls operation `id`; resolves to its answer's `data`, typed from the OpenAPI document's answer schema. */
    call<K extends keyof Ops & string>(id: K, ...rest: Ops[K]['params'] extends undefined ? (Ops[K]['body'] extends undefined ? [Args<Ops[K]>?] : [Args<Ops[K]>]) : [Args<Ops[K]>]): Promise<Ops[K]['data']> {
      return send(id, rest[0] ?? {}, true);
    },
  };
}
