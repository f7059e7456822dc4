import { Type, type Static, type TSchema } from '@sinclair/typebox';
import { Value } from '@sinclair/typebox/value';
import { GATEWAY_PERMISSIONS } from '../../config/gateway.js';

/**
 * The manifest of one task plugin version (plugin.json, or the `taskPlugin` field of an npm package's
 * package.json). Validated strictly: unknown fields, bad formats and unsafe routes are refused.
 */
const Lit = <T extends string>(...values: T[]) => Type.Union(values.map((v) => Type.Literal(v)));

const Field = Type.Object(
  {
    in: Lit('body', 'query', 'path'),
    name: Type.String({ pattern: '^[a-z_][a-z0-9_]{0,63}$' }),
    type: Lit('string', 'integer', 'number', 'boolean'),
    required: Type.Optional(Type.Boolean()),
    description: Type.Optional(Type.String({ maxLength: 500 })),
    maxLength: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000 })),
    minimum: Type.Optional(Type.Number()),
    maximum: Type.Optional(Type.Number()),
    enum: Type.Optional(Type.Array(Type.Union([Type.String({ maxLength: 200 }), Type.Number()]), { minItems: 1, maxItems: 100 })),
  },
  { additionalProperties: false },
);

const Route = Type.Object(
  {
    method: Lit('GET', 'POST', 'PUT', 'DELETE', 'PATCH'),
    path: Type.String({ minLength: 2, maxLength: 200 }),
    summary: Type.String({ minLength: 1, maxLength: 200 }),
    auth: Lit('admin', 'root'),
    permission: Type.Optional(Type.String({ maxLength: 64 })),
    /** Name of the function the entry module exports for this route. */
    handler: Type.String({ pattern: '^[A-Za-z_$][A-Za-z0-9_$]{0,63}$' }),
    /** create: makes a task (budget checked first); read / cancel: acts on the caller's own :task_id. */
    task: Type.Optional(Lit('none', 'create', 'read', 'cancel')),
    metering: Type.Optional(Lit('per_task')),
    fields: Type.Optional(Type.Array(Field, { maxItems: 64 })),
  },
  { additionalProperties: false },
);

const Meta = {
  key: Type.String({ pattern: '^[a-z][a-z0-9-]{1,63}$' }),
  version: Type.String({ pattern: '^\\d{1,9}\\.\\d{1,9}\\.\\d{1,9}(-[0-9A-Za-z.-]{1,40})?$' }),
  apiVersion: Type.Literal(1),
  name: Type.String({ minLength: 1, maxLength: 100 }),
  description: Type.Optional(Type.String({ maxLength: 2000 })),
  website: Type.Optional(Type.String({ maxLength: 500 })),
  baseUrl: Type.Optional(Type.String({ maxLength: 500 })),
  icon: Type.Optional(Type.String({ maxLength: 500 })),
  models: Type.Array(Type.String({ minLength: 1, maxLength: 200 }), { maxItems: 500 }),
  channelTypes: Type.Array(Type.Integer({ minimum: 0, maximum: 1000 }), { maxItems: 100 }),
  sortPriority: Type.Optional(Type.Integer({ minimum: -1_000_000, maximum: 1_000_000 })),
  upstreams: Type.Optional(Type.Array(Type.String({ maxLength: 200 }), { maxItems: 50 })),
  usageProfiles: Type.Optional(Type.Array(Type.Record(Type.String(), Type.Unknown()), { maxItems: 50 })),
  usageSchema: Type.Optional(Type.Record(Type.String(), Type.Unknown())),
  /** ES module file inside the version folder (.mjs, or .js in an npm package of type module). */
  entry: Type.String({ minLength: 1, maxLength: 200, pattern: '^[A-Za-z0-9_][A-Za-z0-9._/-]*$' }),
  routes: Type.Array(Route, { minItems: 1, maxItems: 32 }),
};
export const PluginManifestSchema = Type.Object(Meta, { additionalProperties: false });

export type PluginManifest = Static<typeof PluginManifestSchema>;
export type PluginRoute = Static<typeof Route>;
export type PluginField = Static<typeof Field>;

/** Plugin routes live under these prefixes only; anything else a plugin asks for is refused. */
export const ROUTE_PREFIXES = ['/api/', '/v1/'];
/** Routes the gateway serves outside the registry (ops endpoints). */
const RESERVED_PATHS = new Set(['/api/openapi.json']);
const SEGMENT = /^(?:[a-z0-9][a-z0-9._~-]{0,63}|:[a-z_][a-z0-9_]{0,63})$/;

export class ManifestError extends Error {}

function httpUrl(v: string): boolean {
  try {
    const u = new URL(v);
    return (u.protocol === 'http:' || u.protocol === 'https:') && !!u.host && !u.username && !u.password;
  } catch {
    return false;
  }
}

function checkRoute(r: PluginRoute, where: string) {
  if (!ROUTE_PREFIXES.some((p) => r.path.startsWith(p))) throw new ManifestError(`${where}: path must start with ${ROUTE_PREFIXES.join(' or ')}`);
  if (RESERVED_PATHS.has(r.path)) throw new ManifestError(`${where}: path ${r.path} is reserved`);
  const segments = r.path.slice(1).split('/');
  if (segments.length > 10 || segments.some((s) => !SEGMENT.test(s))) {
    throw new ManifestError(`${where}: path segments must be lower-case letters, digits, . _ ~ - or :param (at most 10)`);
  }
  if (segments.slice(0, 2).some((s) => s.startsWith(':'))) throw new ManifestError(`${where}: the first two path segments must be literal`);
  if (r.permission !== undefined && !(GATEWAY_PERMISSIONS as readonly string[]).includes(r.permission)) {
    throw new ManifestError(`${where}: unknown permission ${r.permission}`);
  }
  const fields = r.fields ?? [];
  const seen = new Set<string>();
  for (const f of fields) {
    const id = `${f.in}:${f.name}`;
    if (seen.has(id)) throw new ManifestError(`${where}: field ${id} is declared twice`);
    seen.add(id);
    if (f.in === 'path' && f.type !== 'string' && f.type !== 'integer') throw new ManifestError(`${where}: path field ${f.name} must be a string or an integer`);
  }
  const params = segments.filter((s) => s.startsWith(':')).map((s) => s.slice(1));
  if (new Set(params).size !== params.length) throw new ManifestError(`${where}: a path parameter repeats`);
  const declared = fields.filter((f) => f.in === 'path').map((f) => f.name);
  if (params.sort().join() !== declared.sort().join()) throw new ManifestError(`${where}: path parameters and path fields must match (${params.join(', ') || 'none'} vs ${declared.join(', ') || 'none'})`);
  if ((r.method === 'GET' || r.method === 'DELETE') && fields.some((f) => f.in === 'body')) throw new ManifestError(`${where}: ${r.method} routes take no body fields`);
  const task = r.task ?? 'none';
  if (task === 'create') {
    if (r.method !== 'POST') throw new ManifestError(`${where}: a task-creating route must be POST`);
    if (!r.metering) throw new ManifestError(`${where}: a task-creating route must declare metering`);
  } else if (r.metering) {
    throw new ManifestError(`${where}: only a task-creating route is metered`);
  }
  if ((task === 'read' || task === 'cancel') && !params.includes('task_id')) throw new ManifestError(`${where}: a ${task} route needs a :task_id path parameter`);
  if (task === 'cancel' && r.method === 'GET') throw new ManifestError(`${where}: a cancel route cannot be GET`);
}

/** Checks a parsed manifest; returns it typed or throws ManifestError naming the first problem. */
export function validateManifest(value: unknown): PluginManifest {
  if (!Value.Check(PluginManifestSchema, value)) {
    const first = [...Value.Errors(PluginManifestSchema, value)][0];
    const at = first?.path || '/';
    throw new ManifestError(`manifest ${at}: ${first?.message ?? 'invalid'}`);
  }
  const m = value as PluginManifest;
  for (const [name, v] of [['website', m.website], ['baseUrl', m.baseUrl]] as const) {
    if (v !== undefined && v !== '' && !httpUrl(v)) throw new ManifestError(`manifest /${name}: must be an absolute http(s) URL without credentials`);
  }
  if (m.entry.split('/').some((s) => s === '..' || s === '.' || s === '')) throw new ManifestError('manifest /entry: must be a relative path inside the version folder');
  if (!/\.(mjs|js)$/.test(m.entry)) throw new ManifestError('manifest /entry: must be an ES module (.mjs, or .js in a package of type module)');
  const routes = new Set<string>();
  m.routes.forEach((r, i) => {
    const where = `manifest /routes/${i} (${r.method} ${r.path})`;
    checkRoute(r, where);
    const id = `${r.method} ${r.path.replace(/:\w+/g, ':')}`;
    if (routes.has(id)) throw new ManifestError(`${where}: declared twice`);
    routes.add(id);
  });
  return m;
}

/** The JSON schema of one part (body, query or path) of a route, from its declared fields. */
export function partSchema(fields: PluginField[], where: 'body' | 'query' | 'path'): TSchema | undefined {
  const own = fields.filter((f) => f.in === where);
  if (!own.length && where !== 'body') return undefined;
  const properties: Record<string, TSchema> = {};
  for (const f of own) {
    const o: Record<string, unknown> = {};
    if (f.description) o.description = f.description;
    if (f.type === 'string') o.maxLength = f.maxLength ?? 10_000;
    if (f.minimum !== undefined) o.minimum = f.minimum;
    if (f.maximum !== undefined) o.maximum = f.maximum;
    const base = f.type === 'string' ? Type.String(o) : f.type === 'integer' ? Type.Integer(o) : f.type === 'number' ? Type.Number(o) : Type.Boolean(o);
    properties[f.name] = f.enum ? { ...base, enum: f.enum } : base;
  }
  const required = own.filter((f) => f.in === 'path' || f.required).map((f) => f.name);
  return Type.Unsafe({ type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false });
}
