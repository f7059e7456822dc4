import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { requestIdOf } from './request-id.js';
import { AppError } from './errors.js';

/**
 * A request served on the fast lane: what a lane route's authentication and handler read. A FastifyRequest has
 * the same fields, so one handler serves both the lane and its Fastify route.
 */
export interface LaneRequest {
  id: string;
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  raw: IncomingMessage;
  body: unknown;
  /** The client's address, as Fastify's request.ip gives it. */
  readonly ip: string;
  readonly log: Logger;
}

/** A JSON-body route served outside Fastify's request cycle (see FastLane). */
export interface LaneRoute {
  method: 'POST';
  path: string;
  operationId: string;
  bodyLimit: number;
  /** Every answer says `Cache-Control: no-store` (a streamed one says no-cache, as on its Fastify route). */
  noStore?: boolean;
  /** Checks the parsed body (defaults applied), as the route's Fastify validator would; errors as ajv gives them. */
  validate?: ((body: unknown) => boolean) & { errors?: unknown };
  /** Authentication (and anything else of the route's onRequest step); throws AppError to refuse. */
  before(req: LaneRequest): Promise<void>;
  /** Answers on `res` itself; throws (before anything was written) to answer an error. */
  handler(req: LaneRequest, res: ServerResponse): Promise<void>;
}

/** What the lane borrows from the app it stands in front of, so both answer alike. */
export interface LaneShared {
  logger: Logger;
  trustProxy: boolean;
  /** Every request gets an id of ours, whatever X-Request-Id the client sent (the app's option of that name). */
  ownRequestIds?: boolean;
  /** The app's JSON body parser: the value, or throws AppError (INVALID_JSON, JSON_TOO_DEEP, NUL refused). */
  parseJson(text: string): unknown;
  /** The catalog's answer for a code, in the app's shape. */
  errorBody(req: LaneRequest, code: string, params?: Record<string, string | number>, data?: unknown): { status: number; body: unknown; headers?: Record<string, string> };
  /** The params of INVALID_PARAMETERS for a validator's errors, as the app's error handler words them. */
  validationParams(errors: unknown, context: string): Record<string, string | number>;
  /** The request log line, as the app writes it for every answered request. */
  requestLog(line: { reqId: string; request: { method: string; route: string; ip: string }; status: number; ms: number }): void;
}

export type LaneObserver = (operationId: string, method: string, route: string, status: number, seconds: number) => void;

/** Runs first for every lane request, as an app-wide onRequest hook of the app's does (headers every answer carries). */
export type LaneStarter = (req: LaneRequest, res: ServerResponse) => void;

/**
 * Serves a few hot routes straight from node:http, in front of Fastify: one lookup by method and path, the body
 * read and parsed as the app does, authentication, validation and the handler, with the app's request ids,
 * request log line, error answers and observers (metrics). Everything else (and every request to a path it
 * does not hold) goes to Fastify. Fastify's own per-request objects, hooks and router cost about 50 µs of CPU
 * per call; the relay's internal API is called thousands of times a second.
 */
export class FastLane {
  private readonly routes = new Map<string, LaneRoute>();
  private readonly observers: LaneObserver[] = [];
  private readonly starters: LaneStarter[] = [];
  /** Set while the app closes: Fastify then answers every request (503 while closing). */
  closing = false;

  constructor(private readonly shared: LaneShared) {}

  add(route: LaneRoute) {
    const key = `${route.method} ${route.path}`;
    if (this.routes.has(key)) throw new Error(`fast lane: ${key} is registered twice`);
    this.routes.set(key, route);
  }

  observe(observer: LaneObserver) {
    this.observers.push(observer);
  }

  onRequest(starter: LaneStarter) {
    this.starters.push(starter);
  }

  /** Serves the request when it is a lane route's; false leaves it to Fastify. */
  handle(req: IncomingMessage, res: ServerResponse): boolean {
    if (this.closing || this.routes.size === 0 || req.method !== 'POST') return false;
    const url = req.url ?? '';
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    // Fastify ignores trailing slashes; a NUL (%00) anywhere in the URL is refused (the app's onRequest hook).
    if (path.length > 1 && path.endsWith('/')) path = path.replace(/\/+$/, '');
    const route = this.routes.get(`POST ${path}`);
    if (!route || url.includes('%00')) return false;
    void this.serve(route, req, res);
    return true;
  }

  private async serve(route: LaneRoute, raw: IncomingMessage, res: ServerResponse) {
    const startedAt = performance.now();
    const id = requestIdOf(raw.headers, this.shared.ownRequestIds);
    const lane = this;
    const logger = this.shared.logger;
    let log: Logger | undefined;
    const req: LaneRequest = {
      id,
      method: 'POST',
      url: raw.url!,
      headers: raw.headers,
      raw,
      body: undefined,
      get ip() {
        return lane.ipOf(raw);
      },
      get log() {
        return (log ??= logger.child({ reqId: id }));
      },
    };
    res.on('finish', () => this.finished(route, req, res.statusCode, startedAt));
    try {
      if (route.noStore) res.setHeader('cache-control', 'no-store');
      for (const s of this.starters) s(req, res);
      await route.before(req);
      req.body = await this.body(route, raw);
      if (route.validate && !route.validate(req.body)) throw new AppError('INVALID_PARAMETERS', { params: this.shared.validationParams(route.validate.errors, 'body') });
      await route.handler(req, res);
    } catch (e) {
      this.fail(req, res, e);
    }
  }

  /** Reads the body as the app's JSON parser does: none, or JSON within the route's limit. */
  private body(route: LaneRoute, raw: IncomingMessage): Promise<unknown> {
    const type = raw.headers['content-type'];
    const length = raw.headers['content-length'];
    if (type === undefined && raw.headers['transfer-encoding'] === undefined && (length === undefined || length === '0')) return Promise.resolve(undefined);
    if (type === undefined || type.split(';')[0]!.trim().toLowerCase() !== 'application/json') return Promise.reject(new AppError('UNSUPPORTED_MEDIA_TYPE'));
    const declared = Number(length);
    if (declared > route.bodyLimit) return Promise.reject(new AppError('PAYLOAD_TOO_LARGE'));
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      let received = 0;
      const stop = () => {
        raw.off('data', onData);
        raw.off('end', onEnd);
        raw.off('error', onEnd);
      };
      const onData = (chunk: Buffer) => {
        received += chunk.length;
        if (received > route.bodyLimit) {
          stop();
          return reject(new AppError('PAYLOAD_TOO_LARGE'));
        }
        chunks.push(chunk);
      };
      const onEnd = (err?: Error) => {
        stop();
        if (err) return reject(new AppError('INVALID_PARAMETERS', { params: { detail: 'malformed request' } }));
        if (!Number.isNaN(declared) && received !== declared) return reject(new AppError('INVALID_JSON'));
        const text = chunks.length === 1 ? chunks[0]!.toString('utf8') : Buffer.concat(chunks, received).toString('utf8');
        try {
          resolve(this.shared.parseJson(text));
        } catch (e) {
          reject(e);
        }
      };
      raw.on('data', onData);
      raw.on('end', onEnd);
      raw.on('error', onEnd);
    });
  }

  /** The catalog's answer for what went wrong; an error after the answer began ends the connection. */
  private fail(req: LaneRequest, res: ServerResponse, e: unknown) {
    if (res.headersSent) {
      res.destroy();
      return;
    }
    let code = 'INTERNAL_ERROR';
    let params: Record<string, string | number> | undefined;
    let data: unknown;
    let extra: Record<string, string> | undefined;
    if (e instanceof AppError) {
      code = e.code;
      params = e.options.params;
      data = e.options.data;
      extra = e.options.headers;
    } else {
      req.log.error({ err: e, request: this.summary(req) }, 'unhandled error');
    }
    const { status, body, headers } = this.shared.errorBody(req, code, params, data);
    const text = JSON.stringify(body);
    res.writeHead(status, { ...extra, 'x-request-id': req.id, 'cache-control': 'no-store', ...headers, 'content-type': 'application/json; charset=utf-8', 'content-length': Buffer.byteLength(text) });
    res.end(text);
  }

  private summary(req: LaneRequest) {
    return { method: req.method, route: req.url.split('?')[0]!, ip: req.ip };
  }

  /** The client's address as Fastify gives it: the socket's, or the first X-Forwarded-For entry when proxies are trusted. */
  private ipOf(raw: IncomingMessage): string {
    const forwarded = this.shared.trustProxy ? raw.headers['x-forwarded-for'] : undefined;
    const first = typeof forwarded === 'string' ? forwarded.split(',')[0]!.trim() : '';
    return first || raw.socket.remoteAddress || '';
  }

  private finished(route: LaneRoute, req: LaneRequest, status: number, startedAt: number) {
    const ms = performance.now() - startedAt;
    if (this.shared.logger.isLevelEnabled('info')) {
      this.shared.requestLog({ reqId: req.id, request: { method: req.method, route: route.path, ip: req.ip }, status, ms: Math.round(ms) });
    }
    for (const o of this.observers) o(route.operationId, req.method, route.path, status, ms / 1000);
  }
}
