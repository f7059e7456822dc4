import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { AppError } from '../kit/http/errors.js';
import { operations } from './operations.js';
import type { Deployable, OperationImpl, OperationSpec, OperationState } from './types.js';

/** A registered operation: SPEC declaration plus its implementation when built. */
export interface RegisteredOperation {
  spec: OperationSpec;
  impl?: OperationImpl<any>;
  state: OperationState;
}

export interface RateLimitBucket {
  /** 'ip' buckets run before authentication, 'user' buckets after it. */
  per: 'ip' | 'user';
  check(req: FastifyRequest): Promise<void>;
}

export interface DeployableWiring {
  deployable: Deployable;
  implementations: OperationImpl<any>[];
  /** Authenticates the request for the operation's auth class; throws AppError when it must not pass. */
  authenticate(req: FastifyRequest, spec: OperationSpec): Promise<void>;
  rateLimits: Record<string, RateLimitBucket>;
  /** SPEC ids to serve; empty = all. Others answer 404 OPERATION_DISABLED. */
  enabledOperations: string[];
  /** Runs before authentication (for example the origin guard). */
  guards?: Partial<Record<'originGuard', (req: FastifyRequest) => Promise<void>>>;
  /**
   * Operations added beside the SPEC ones (routes of task plugins): checked for conflicts with them and
   * with each other, authenticated the same way, not subject to enabledOperations.
   */
  extra?: RegisteredOperation[];
  /**
   * Other paths of an operation (the reference's old spellings): each is one more route with the
   * operation's own handler, authentication, limits and switch (src/contract/coverage.ts).
   */
  aliases?: AliasRoute[];
}

/** A path the operation `servedBy` answers besides its own. */
export interface AliasRoute {
  id: string;
  method: OperationSpec['method'];
  path: string;
  servedBy: string;
}

/** Joins the declarations of one deployable with their implementations. Duplicate ids or routes throw. */
export function operationsOf(deployable: Deployable, implementations: OperationImpl<any>[]): RegisteredOperation[] {
  const byId = new Map<string, OperationImpl<any>>();
  for (const impl of implementations) {
    if (byId.has(impl.id)) throw new Error(`operation ${impl.id} is implemented twice`);
    byId.set(impl.id, impl);
  }
  const specs = operations.filter((o) => o.deployable === deployable);
  for (const id of byId.keys()) {
    if (!specs.some((s) => s.id === id)) throw new Error(`operation ${id} is implemented but not declared for ${deployable}`);
  }
  assertNoRouteConflicts(specs);
  return specs.map((spec) => {
    const impl = byId.get(spec.id);
    return { spec, impl, state: impl ? 'implemented' : 'planned' };
  });
}

function routeOwner(s: Pick<OperationSpec, 'id' | 'plugin'>): string {
  return s.plugin ? `${s.id} (task plugin ${s.plugin.key}@${s.plugin.version})` : s.id;
}

/** Start-up refuses two operations on the same method and path (trailing slashes are ignored). */
export function assertNoRouteConflicts(specs: Pick<OperationSpec, 'id' | 'method' | 'path' | 'plugin'>[]): void {
  const seen = new Map<string, string>();
  for (const s of specs) {
    const key = `${s.method} ${s.path.replace(/\/+$/, '') || '/'}`.replace(/:\w+/g, ':');
    const other = seen.get(key);
    if (other) throw new Error(`route conflict: ${routeOwner(s)} and ${other} both register ${s.method} ${s.path}`);
    seen.set(key, routeOwner(s));
  }
}

function noStore(reply: FastifyReply) {
  reply.header('Cache-Control', 'no-store');
}

/** Registers every operation of the deployable on the app, with its guards, limits and auth. */
export function registerOperations(app: FastifyInstance, wiring: DeployableWiring): RegisteredOperation[] {
  const builtIn = operationsOf(wiring.deployable, wiring.implementations);
  const extra = wiring.extra ?? [];
  const registered = [...builtIn, ...extra];
  const aliases = wiring.aliases ?? [];
  assertNoRouteConflicts([...registered.map((o) => o.spec), ...aliases]);
  for (const op of registered) {
    app.route(routeOf(wiring, op, op.spec.path));
    if (op.impl?.lane) laneOf(app, wiring, op);
  }
  for (const alias of aliases) {
    const op = registered.find((o) => o.spec.id === alias.servedBy);
    if (!op || op.spec.method !== alias.method) throw new Error(`alias ${alias.id} names ${alias.servedBy}, not a ${alias.method} operation of ${wiring.deployable}`);
    app.route(routeOf(wiring, op, alias.path));
  }
  return registered;
}

/**
 * Puts an operation with a `lane` on the app's fast lane too: the same switch, authentication, body limit and
 * body schema as its Fastify route. A disabled operation stays with Fastify (which answers OPERATION_DISABLED).
 */
function laneOf(app: FastifyInstance, wiring: DeployableWiring, op: RegisteredOperation) {
  const { spec, impl } = op;
  if (!impl?.lane || !app.fastLane || !app.compileBodyValidator) return;
  if (spec.method !== 'POST' || spec.path.includes(':') || impl.rateLimit?.length || impl.gate || impl.multipart || impl.bodyMayBeAbsent || spec.originGuard || spec.deployable === 'account' || impl.schema?.querystring || impl.schema?.params) {
    throw new Error(`operation ${spec.id} cannot be served on the fast lane (only a JSON POST without path parameters, limits, gates or guards)`);
  }
  const enabled = new Set(wiring.enabledOperations);
  if (enabled.size > 0 && !spec.plugin && !enabled.has(spec.id)) return;
  app.fastLane.add({
    method: 'POST',
    path: spec.path,
    operationId: spec.id,
    bodyLimit: impl.bodyLimit ?? app.initialConfig.bodyLimit!,
    noStore: impl.noStore,
    validate: impl.schema?.body ? app.compileBodyValidator(impl.schema.body) : undefined,
    // The authenticators read the headers, the socket and the log of a request, and set who called: a lane request has them.
    before: (req) => wiring.authenticate(req as unknown as FastifyRequest, spec),
    handler: impl.lane,
  });
}

/** The Fastify route of an operation at `url` (its own path or an alias): switch, limits, guard, auth, gate, handler. */
function routeOf(wiring: DeployableWiring, op: RegisteredOperation, url: string): RouteOptions {
  const { spec, impl } = op;
  const enabled = new Set(wiring.enabledOperations);
  const disabled = enabled.size > 0 && !spec.plugin && !enabled.has(spec.id);
  const buckets = (impl?.rateLimit ?? []).map((b) => bucket(wiring, b));
  const ipBuckets = buckets.filter((b) => b.per === 'ip');
  const userBuckets = buckets.filter((b) => b.per === 'user');
  const originGuard = spec.originGuard ? wiring.guards?.originGuard : undefined;
  return {
    method: spec.method,
    url,
    // Parts left undefined are dropped: Fastify warns about a schema key without a schema.
    schema: impl?.schema ? (Object.fromEntries(Object.entries(impl.schema).filter(([, v]) => v !== undefined)) as any) : undefined,
    bodyLimit: impl?.bodyLimit,
    config: { operationId: spec.id, multipart: impl?.multipart === true },
    onRequest: async (req, reply) => {
      if (disabled) throw new AppError('OPERATION_DISABLED', { params: { operation: spec.id } });
      if (impl?.noStore || spec.deployable === 'account') noStore(reply);
      for (const b of ipBuckets) await b.check(req);
      if (originGuard) await originGuard(req);
      await wiring.authenticate(req, spec);
      for (const b of userBuckets) await b.check(req);
      if (!impl) throw new AppError('NOT_IMPLEMENTED', { params: { operation: spec.id } });
      if (impl.gate) await impl.gate(req);
    },
    preValidation: impl?.bodyMayBeAbsent
      ? async (req) => {
          if (req.body === undefined) req.body = {};
        }
      : undefined,
    handler: async (req, reply) => impl!.handler(req as any, reply),
  };
}

function bucket(wiring: DeployableWiring, name: string): RateLimitBucket {
  const b = wiring.rateLimits[name];
  if (!b) throw new Error(`unknown rate-limit bucket "${name}" on ${wiring.deployable}`);
  return b;
}
