import crypto from 'node:crypto';
import http from 'node:http';
import type { Socket } from 'node:net';
import { Ajv, type ValidateFunction } from 'ajv';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { checkJsonTextDepth, DEFAULT_MAX_JSON_DEPTH } from '../json/limits.js';
import { fixedShapeLogger } from '../log/logger.js';
import { AppError, langOf, renderMessage, type ErrorCatalog } from './errors.js';
import { parseMultipart } from './multipart.js';
import { FastLane } from './fast-lane.js';
import { requestIdOf } from './request-id.js';

/**
 * A route's validator, compiled by its first request: start-up does not compile the schemas of every route
 * (a few hundred ms), and a route nobody calls never costs anything.
 */
function compileOnFirstUse(ajv: Ajv, schema: object) {
  let compiled: ValidateFunction | undefined;
  const validate = (data: unknown) => {
    compiled ??= ajv.compile(schema);
    const valid = compiled(data);
    validate.errors = compiled.errors;
    return valid;
  };
  validate.errors = null as ValidateFunction['errors'];
  return validate;
}

export interface HttpAppOptions {
  logger: Logger;
  trustProxy: boolean;
  bodyLimit: number;
  /** How deep a JSON body may nest (400 JSON_TOO_DEEP beyond; kit/json/limits.ts); DEFAULT_MAX_JSON_DEPTH when absent. */
  maxJsonDepth?: number;
  catalog: ErrorCatalog;
  /**
   * Renders an error body other than the default envelope {success, code, message} (a deployable with its
   * own wire format). Gets the code, its catalog status and rendered message, and the error's params/data;
   * null keeps the envelope (for routes of the deployable that answer it).
   */
  renderError?: (req: FastifyRequest, e: { code: string; status: number; message: string; params?: Record<string, string | number>; data?: unknown }) => RenderedError | null;
  /**
   * Every request gets an id of ours, whatever X-Request-Id the client sent: for a deployable whose request
   * ids name stored records, where a client's reused id would collide with or hide another record.
   */
  ownRequestIds?: boolean;
}

/** An error answer: status, body and the headers that go with it (a code the body's shape has no room for). */
export interface RenderedError {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Request log line without the query string or raw URL, which may carry codes and tokens. */
function requestSummary(req: FastifyRequest) {
  return {
    method: req.method,
    route: req.routeOptions?.url ?? req.url.split('?')[0],
    ip: req.ip,
  };
}

/**
 * Builds a Fastify instance with the protocol rules every deployable shares: request ids, JSON parsing
 * that accepts an empty body, the error envelope with stable codes, and never a stack trace.
 */
export function createHttpApp(opts: HttpAppOptions): FastifyInstance {
  const app: FastifyInstance = Fastify({
    loggerInstance: opts.logger as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }),
    trustProxy: opts.trustProxy,
    bodyLimit: opts.bodyLimit,
    routerOptions: { ignoreTrailingSlash: true },
    requestIdHeader: false,
    genReqId: (req) => requestIdOf(req.headers, opts.ownRequestIds),
    // Fastify's own answers (a path value that is not valid percent-encoded UTF-8 or is too long) would
    // bypass the error handler: a body of another shape that repeats the whole URL, query string included.
    frameworkErrors: (error, req, reply) => {
      reply.header('X-Request-Id', req.id);
      const detail = error.code === 'FST_ERR_MAX_PARAM_LENGTH' ? 'a path value is too long' : 'the URL is not valid percent-encoded UTF-8';
      return sendError(req, reply, 'INVALID_PARAMETERS', { detail, field: 'path' });
    },
    // Node's HTTP parser refuses a request before Fastify sees it (headers or URL over the size limit,
    // malformed request line): answer with the same body shape, not Fastify's default one.
    clientErrorHandler: (err: NodeJS.ErrnoException, socket: Socket) => {
      if (err.code === 'ECONNRESET' || socket.destroyed) return;
      const code = err.code === 'HPE_HEADER_OVERFLOW' ? 'HEADERS_TOO_LARGE' : err.code === 'ERR_HTTP_REQUEST_TIMEOUT' ? 'REQUEST_TIMEOUT' : 'INVALID_PARAMETERS';
      const req = requestless();
      const { status, body } = errorBody(req, code, code === 'INVALID_PARAMETERS' ? { detail: 'malformed request' } : undefined);
      const text = JSON.stringify(body);
      if (socket.writable) {
        const head = [`HTTP/1.1 ${status} ${http.STATUS_CODES[status]}`, 'Content-Type: application/json; charset=utf-8', `Content-Length: ${Buffer.byteLength(text)}`, `X-Request-Id: ${req.id}`, 'Cache-Control: no-store', 'Connection: close'];
        socket.write(`${head.join('\r\n')}\r\n\r\n${text}`);
      }
      socket.destroy();
    },
  });

  // Query strings and path parameters arrive as text and are coerced to the declared types; JSON bodies
  // are checked strictly, so {"password": ["x"]} is a type error rather than a silent conversion.
  const coercing = new Ajv({ coerceTypes: 'array', useDefaults: true, allErrors: false, strict: false });
  const strict = new Ajv({ coerceTypes: false, useDefaults: true, allErrors: false, strict: false });
  app.setValidatorCompiler(({ schema, httpPart }) => compileOnFirstUse(httpPart === 'body' ? strict : coercing, schema));

  const maxJsonDepth = opts.maxJsonDepth ?? DEFAULT_MAX_JSON_DEPTH;
  app.removeAllContentTypeParsers();
  /** The JSON body's value (undefined when empty), or the catalog's refusal. */
  const parseJson = (body: string): unknown => {
    const text = body.trim();
    if (text === '') return undefined;
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      throw new AppError('INVALID_JSON');
    }
    try {
      checkJsonTextDepth(text, maxJsonDepth);
    } catch {
      throw new AppError('JSON_TOO_DEEP', { params: { max: maxJsonDepth } });
    }
    // JSON can only carry a NUL character as the escape \u0000, so only such bodies are walked.
    if (text.includes('\\u0000') && holdsNul(parsed)) throw nulRefused();
    return parsed;
  };
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (_req, body, done) => {
    let parsed: unknown;
    try {
      parsed = parseJson(body as string);
    } catch (e) {
      return done(e as Error, undefined);
    }
    done(null, parsed);
  });

  // Only routes that take a file (config.multipart) read a multipart/form-data body; every other one refuses it.
  app.addContentTypeParser('multipart/form-data', { parseAs: 'buffer' }, async (req: FastifyRequest, body: Buffer) => {
    if ((req.routeOptions.config as { multipart?: boolean } | undefined)?.multipart !== true) throw new AppError('UNSUPPORTED_MEDIA_TYPE');
    let fields: Awaited<ReturnType<typeof parseMultipart>>;
    try {
      fields = await parseMultipart(body, String(req.headers['content-type']));
    } catch {
      throw new AppError('INVALID_PARAMETERS', { params: { detail: 'the multipart/form-data body could not be read', field: 'body' } });
    }
    if (Object.entries(fields).some(([name, v]) => name.includes('\0') || [v].flat().some((x) => typeof x === 'string' && x.includes('\0')))) throw nulRefused();
    return fields;
  });

  // Per-request hooks take a callback rather than returning a promise: no promise or microtask each time.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('X-Request-Id', req.id);
    // A NUL in a path or query value: PostgreSQL cannot store or compare it, and no text field needs one.
    if (req.url.includes('%00')) return done(nulRefused());
    done();
  });

  // The summary has a fixed shape with no secrets, so it skips the redaction pass (see fixedShapeLogger).
  const requestLog = fixedShapeLogger(opts.logger);
  app.addHook('onResponse', (req, reply, done) => {
    if (opts.logger.isLevelEnabled('info')) {
      requestLog.info({ reqId: req.id, request: requestSummary(req), status: reply.statusCode, ms: Math.round(reply.elapsedTime) }, 'request');
    }
    done();
  });

  /** The error body for a code: the envelope, or the deployable's own shape. */
  function errorBody(req: FastifyRequest, code: string, params?: Record<string, string | number>, data?: unknown): RenderedError {
    const def = opts.catalog[code] ?? opts.catalog.INTERNAL_ERROR;
    const message = renderMessage(def, langOf(req.headers['accept-language']), params);
    const own = opts.renderError?.(req, { code, status: def.status, message, params, data });
    if (own) return own;
    const body: Record<string, unknown> = { success: false, code, message };
    if (data !== undefined) body.data = data;
    return { status: def.status, body };
  }

  function sendError(req: FastifyRequest, reply: FastifyReply, code: string, params?: Record<string, string | number>, data?: unknown) {
    const { status, body, headers } = errorBody(req, code, params, data);
    reply.header('Cache-Control', 'no-store');
    if (headers) reply.headers(headers);
    return reply.status(status).send(body);
  }

  app.setErrorHandler((error: FastifyError | AppError, req, reply) => {
    let code: string;
    let params: Record<string, string | number> | undefined;
    let data: unknown;
    if (error instanceof AppError) {
      code = error.code;
      params = error.options.params;
      data = error.options.data;
      if (error.options.headers) reply.headers(error.options.headers);
      error.options.onReply?.(reply);
    } else if ((error as FastifyError).validation) {
      code = 'INVALID_PARAMETERS';
      params = validationParams((error as FastifyError).validation, (error as FastifyError).validationContext);
    } else {
      switch ((error as FastifyError).code) {
        case 'FST_ERR_CTP_BODY_TOO_LARGE':
          code = 'PAYLOAD_TOO_LARGE';
          break;
        case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
          code = 'UNSUPPORTED_MEDIA_TYPE';
          break;
        case 'FST_ERR_CTP_EMPTY_JSON_BODY':
        case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
          code = 'INVALID_JSON';
          break;
        default:
          if ((error as FastifyError).statusCode && (error as FastifyError).statusCode! < 500) {
            code = 'INVALID_PARAMETERS';
            params = { detail: 'malformed request' };
          } else {
            code = 'INTERNAL_ERROR';
            req.log.error({ err: error, request: requestSummary(req) }, 'unhandled error');
          }
      }
    }
    return sendError(req, reply, code, params, data);
  });

  app.setNotFoundHandler((req, reply) => {
    const { status, body, headers } = errorBody(req, 'NOT_FOUND');
    if (headers) reply.headers(headers);
    return reply.status(status).send(body);
  });

  // The fast lane stands in front of Fastify's own request listener, on the server Fastify made (its timeouts kept).
  const lane = new FastLane({
    logger: opts.logger,
    trustProxy: opts.trustProxy,
    ownRequestIds: opts.ownRequestIds,
    parseJson,
    errorBody: (req, code, params, data) => errorBody(req as unknown as FastifyRequest, code, params, data),
    validationParams,
    requestLog: (line) => requestLog.info(line, 'request'),
  });
  const [fastify] = app.server.listeners('request') as ((req: http.IncomingMessage, res: http.ServerResponse) => void)[];
  app.server.removeAllListeners('request');
  app.server.on('request', (req: http.IncomingMessage, res: http.ServerResponse) => {
    if (!lane.handle(req, res)) fastify!(req, res);
  });
  app.addHook('preClose', (done) => {
    lane.closing = true;
    done();
  });
  app.decorate('fastLane', lane);
  app.decorate('compileBodyValidator', (schema: object) => compileOnFirstUse(strict, schema));

  return app;
}

declare module 'fastify' {
  interface FastifyInstance {
    /** Routes served outside Fastify's request cycle (kit/http/fast-lane.ts). */
    fastLane?: FastLane;
    /** A body validator as the app compiles a route's body schema. */
    compileBodyValidator?: (schema: object) => ((data: unknown) => boolean) & { errors?: unknown };
  }
}

/** INVALID_PARAMETERS' params for a validator's errors: the first one's field and what is wrong with it. */
function validationParams(errors: unknown, context: string | undefined): Record<string, string | number> {
  const v = (errors as FastifyError['validation'])?.[0];
  const field = (v?.instancePath || '').replace(/^\//, '').replace(/\//g, '.') || (v?.params as { missingProperty?: string })?.missingProperty || context || 'body';
  const extra = (v?.params as { additionalProperty?: string })?.additionalProperty;
  return { detail: extra ? `${extra} is not a known field` : `${field} ${v?.message ?? 'is invalid'}`, field: extra ?? field };
}

/** Stands in for the request when Node refused it before there was one (error bodies read only these). */
function requestless(): FastifyRequest {
  return { id: crypto.randomUUID(), method: '', url: '', headers: {} } as unknown as FastifyRequest;
}

function nulRefused() {
  return new AppError('INVALID_PARAMETERS', { params: { detail: 'text must not contain NUL characters' } });
}

/**
 * Whether a parsed JSON value holds a NUL character in any string or property name. Walks with its own
 * stack: a body nested tens of thousands deep (a few hundred KB) must not overflow the call stack.
 */
function holdsNul(value: unknown): boolean {
  const pending: unknown[] = [value];
  while (pending.length) {
    const v = pending.pop();
    if (typeof v === 'string') {
      if (v.includes('\0')) return true;
    } else if (Array.isArray(v)) {
      for (const item of v) pending.push(item);
    } else if (v && typeof v === 'object') {
      for (const [k, inner] of Object.entries(v)) {
        if (k.includes('\0')) return true;
        pending.push(inner);
      }
    }
  }
  return false;
}
