import { OptionalKind, type TSchema } from '@sinclair/typebox';
import { errorCatalog } from './errors/index.js';
import { edgeCodeOf } from './errors/edge.js';
import { relayCodeOfKit } from './errors/relay.js';
import { edgeWireShapeOf } from './wire-errors.js';
import type { RegisteredOperation } from './registry.js';
import { NoData, type AnswerDoc, type AuthClass, type Deployable, type OperationSpec } from './types.js';

type Json = Record<string, any>;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** The shared answer shapes: the envelope of account and gateway, and the error bodies of each deployable. */
const baseComponents: Record<string, Json> = {
  Envelope: {
    type: 'object',
    description: "A success answer of the account and gateway services: {success, message, data}; an operation's data schema says what data holds.",
    properties: { success: { const: true }, message: { type: 'string' }, data: {} },
    required: ['success', 'message'],
  },
  Error: {
    type: 'object',
    description: 'An error answer of the account and gateway services: a stable catalog code, its message in the caller\'s language, sometimes data.',
    properties: { success: { const: false }, code: { type: 'string' }, message: { type: 'string' }, data: {} },
    required: ['success', 'code', 'message'],
  },
  OpenAIError: {
    type: 'object',
    description: "An error answer of the edge, of the relay's OpenAI routes and of the account's playground (OpenAI style).",
    properties: {
      error: {
        type: 'object',
        properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: 'string' }, param: { type: ['string', 'null'] } },
        required: ['message', 'type', 'code'],
      },
      requestId: { type: 'string' },
    },
    required: ['error', 'requestId'],
  },
  AnthropicError: {
    type: 'object',
    description: "An error answer of the Anthropic Messages routes of the relay and the edge (Anthropic's shape; the code is in x-relay-error-code, x-error-code at the edge).",
    properties: {
      type: { const: 'error' },
      error: { type: 'object', properties: { type: { type: 'string' }, message: { type: 'string' } }, required: ['type', 'message'] },
      request_id: { type: 'string' },
    },
    required: ['type', 'error'],
  },
  GeminiError: {
    type: 'object',
    description: "An error answer of the Gemini routes of the relay and the edge (Google's shape; the code is in x-relay-error-code, x-error-code at the edge).",
    properties: {
      error: { type: 'object', properties: { code: { type: 'integer' }, message: { type: 'string' }, status: { type: 'string' } }, required: ['code', 'message', 'status'] },
    },
    required: ['error'],
  },
};

/** The operationId: `<id>_<name>` (A25_login); a task plugin's route `plugin_<key>_<n>`. */
export function operationIdOf(spec: Pick<OperationSpec, 'id' | 'name'>): string {
  return spec.name ? `${spec.id}_${spec.name}` : spec.id.replace(/[^A-Za-z0-9]+/g, '_');
}

/** Codes the authentication of each auth class can answer, per deployable (its auth.ts). */
const ACCOUNT_TOKEN = ['AUTH_UNAUTHORIZED', 'AUTH_TOKEN_EXPIRED', 'AUTH_SESSION_REVOKED', 'AUTH_USER_DISABLED', 'AUTH_EXPLICIT_IDENTITY'];
const AUTH_ERRORS: Record<Deployable, Partial<Record<AuthClass, string[]>>> = {
  account: {
    optional: ACCOUNT_TOKEN,
    customer: ACCOUNT_TOKEN,
    browser: [...ACCOUNT_TOKEN, 'AUTH_SESSION_REQUIRED'],
    admin: [...ACCOUNT_TOKEN, 'AUTH_INSUFFICIENT_PRIVILEGE'],
    root: [...ACCOUNT_TOKEN, 'AUTH_INSUFFICIENT_PRIVILEGE'],
  },
  gateway: {
    admin: ['GW_UNAUTHORIZED', 'GW_FORBIDDEN', 'GW_STAFF_REQUIRED'],
    root: ['GW_UNAUTHORIZED', 'GW_ROOT_REQUIRED'],
    workload: ['relay_not_loopback', 'relay_not_configured', 'relay_token_missing', 'relay_token_invalid'],
  },
  edge: {
    developer: ['missing_api_key', 'invalid_api_key', 'customer_session_not_accepted', 'user_disabled', 'token_disabled', 'token_expired', 'ip_not_allowed', 'rate_limited'],
    workload: ['customer_api_not_loopback', 'customer_api_not_configured', 'customer_api_token_missing', 'customer_api_token_invalid'],
  },
};

/** A step-up proof of the operation's scope (account, X-Security-Proof) refused. */
const PROOF_ERRORS = [
  'AUTH_SESSION_REQUIRED',
  'SECURITY_PROOF_REQUIRED',
  'SECURITY_PROOF_INVALID',
  'SECURITY_PROOF_EXPIRED',
  'SECURITY_PROOF_SCOPE_MISMATCH',
  'SECURITY_PROOF_CONTEXT_MISMATCH',
  'SECURITY_PROOF_CONSUMED',
];
/** A staff proof (G10's sensitive-operation verification) refused. */
const STAFF_PROOF_ERRORS = ['GW_PROOF_REQUIRED', 'GW_PROOF_INVALID'];

/** How a deployable's errors look on an operation's path (the relay answers in its caller's format). */
type ErrorShape = 'envelope' | 'openai' | 'anthropic' | 'gemini';
function errorShapeOf(spec: OperationSpec): ErrorShape {
  if (spec.deployable === 'edge') return edgeWireShapeOf(spec.method, spec.path);
  // new-api's playground on the account service answers as the edge does (src/account/customers/playground).
  if (spec.deployable === 'account') return spec.path.startsWith('/pg/') ? 'openai' : 'envelope';
  if (spec.path.startsWith('/relay/v1/messages')) return 'anthropic';
  if (spec.path.startsWith('/relay/v1beta/')) return 'gemini';
  if (spec.path.startsWith('/relay/')) return 'openai';
  return 'envelope';
}

/** Failures of an upstream that keep the upstream's status (after the channel's status_code_mapping). */
const PASSED_THROUGH = /^relay_(upstream|stream)_/;

/**
 * Every catalog code an operation can answer: its auth class's, the kit's (parameters, body, limits,
 * switches, internal errors) and those its implementation declares; in the deployable's own spelling.
 */
export function errorCodesOf({ spec, impl, state }: RegisteredOperation): string[] {
  const codes = new Set<string>(['INVALID_PARAMETERS', 'INTERNAL_ERROR']);
  if (spec.method !== 'GET' && spec.method !== 'DELETE') for (const c of ['INVALID_JSON', 'JSON_TOO_DEEP', 'UNSUPPORTED_MEDIA_TYPE', 'PAYLOAD_TOO_LARGE']) codes.add(c);
  if (impl?.rateLimit?.length) codes.add('RATE_LIMITED');
  if (spec.originGuard) codes.add('AUTH_ORIGIN_FORBIDDEN');
  if (spec.deployable !== 'edge' && !spec.plugin && state !== 'placeholder') codes.add('OPERATION_DISABLED');
  if (state === 'planned') codes.add('NOT_IMPLEMENTED');
  if (state === 'placeholder' && !impl?.errors?.length) codes.add('api_not_implemented');
  for (const c of AUTH_ERRORS[spec.deployable][spec.auth] ?? []) codes.add(c);
  if (spec.scope) for (const c of PROOF_ERRORS) codes.add(c);
  if (spec.verification) for (const c of STAFF_PROOF_ERRORS) codes.add(c);
  for (const c of impl?.errors ?? []) codes.add(c);
  const shape = errorShapeOf(spec);
  const spelled = [...codes].map((c) => {
    if (spec.deployable === 'edge') return edgeCodeOf(c);
    if (spec.deployable === 'gateway' && shape !== 'envelope') return relayCodeOfKit[c] ?? c;
    return c;
  });
  for (const c of spelled) if (!errorCatalog[c]) throw new Error(`${spec.id} names error code ${c}, which the catalog does not have`);
  return [...new Set(spelled)].sort();
}

function errorSchema(shape: ErrorShape, codes: string[]): Json {
  switch (shape) {
    case 'envelope':
      return { allOf: [ref('Error'), { type: 'object', properties: { code: { enum: codes } } }] };
    case 'openai':
      return { allOf: [ref('OpenAIError'), { type: 'object', properties: { error: { properties: { code: { enum: codes } } } } }] };
    case 'anthropic':
      return ref('AnthropicError');
    case 'gemini':
      return ref('GeminiError');
  }
}

/** The error answers of an operation, one per status, each naming its codes. */
function errorResponses(op: RegisteredOperation): Record<string, Json> {
  const shape = errorShapeOf(op.spec);
  const byStatus = new Map<number, string[]>();
  for (const code of errorCodesOf(op)) {
    const status = errorCatalog[code]!.status;
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  const out: Record<string, Json> = {};
  for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
    out[String(status)] = { description: codes.join(', '), 'x-codes': codes, content: { 'application/json': { schema: errorSchema(shape, codes) } } };
  }
  const passed = [...byStatus.values()].flat().filter((c) => PASSED_THROUGH.test(c));
  if (passed.length) {
    out.default = {
      description: `An upstream's failure with the upstream's status (after the channel's status_code_mapping): ${passed.join(', ')}`,
      'x-codes': passed,
      content: { 'application/json': { schema: errorSchema(shape, passed) } },
    };
  }
  return out;
}

/**
 * A TypeBox schema as the document writes it: every sub-schema with an `$id` becomes a shared component
 * (`#/components/schemas/<$id>`); two different schemas under one `$id` are refused.
 */
function toDocument(schema: unknown, components: Record<string, Json>): any {
  if (Array.isArray(schema)) return schema.map((s) => toDocument(s, components));
  if (!schema || typeof schema !== 'object') return schema;
  const { $id, ...rest } = schema as Json;
  const body: Json = {};
  for (const [k, v] of Object.entries(rest)) body[k] = toDocument(v, components);
  if (typeof $id !== 'string') return body;
  const existing = components[$id];
  if (existing && JSON.stringify(existing) !== JSON.stringify(body)) throw new Error(`two different schemas are named ${$id}`);
  components[$id] = body;
  return ref($id);
}

function parameters(schema: TSchema | undefined, where: 'path' | 'query', components: Record<string, Json>) {
  const props = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const required = new Set<string>((schema as { required?: string[] } | undefined)?.required ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: toDocument(s, components),
  }));
}

/** The success answers of an implemented operation: the envelope with its data, or its own answers. */
function successResponses(op: RegisteredOperation, components: Record<string, Json>): Record<string, Json> {
  const { impl } = op;
  const out: Record<string, Json> = {};
  if (impl?.data) {
    // Type.Optional(data): some successes carry no data.
    const optional = OptionalKind in impl.data;
    const schema =
      impl.data === NoData
        ? ref('Envelope')
        : { allOf: [ref('Envelope'), { type: 'object', properties: { data: toDocument(impl.data, components) }, ...(optional ? {} : { required: ['data'] }) }] };
    const description = impl.data === NoData ? 'Success, no data' : optional ? 'Success: the envelope, with data or without' : 'Success: the envelope with its data';
    out['200'] = { description, content: { 'application/json': { schema } } };
  }
  for (const [status, answer] of Object.entries<AnswerDoc>(impl?.answers ?? {})) {
    const content: Json = {};
    if (answer.schema) content['application/json'] = { schema: toDocument(answer.schema, components) };
    if (answer.stream) content['text/event-stream'] = { schema: { type: 'string', description: 'Server-sent events' } };
    for (const type of answer.media ?? []) content[type] = { schema: { type: 'string', contentMediaType: type, description: 'The bytes as the upstream sent them' } };
    // Beside the envelope of the same status (G49 follows its log as a stream): one answer, both contents.
    const envelope = out[status];
    if (envelope) out[status] = { description: `${envelope.description}; ${answer.description}`, content: { ...envelope.content, ...content } };
    else out[status] = { description: answer.description, ...(Object.keys(content).length ? { content } : {}) };
  }
  return out;
}

/** Success and error answers by status; a status with both (the reference's 200 refusals) accepts either body. */
function mergeResponses(success: Record<string, Json>, errors: Record<string, Json>): Record<string, Json> {
  const out = { ...success };
  for (const [status, e] of Object.entries(errors)) {
    const s = out[status];
    if (!s) {
      out[status] = e;
      continue;
    }
    const either = { anyOf: [s.content?.['application/json']?.schema ?? {}, e.content['application/json'].schema] };
    out[status] = { description: `${s.description}; or an error: ${e.description}`, 'x-codes': e['x-codes'], content: { ...s.content, 'application/json': { schema: either } } };
  }
  return out;
}

/** OpenAPI 3.1 document of one deployable, generated from the registry. */
export function buildOpenApi(title: string, ops: RegisteredOperation[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  const components: Record<string, Json> = { ...baseComponents };
  for (const op of ops) {
    const { spec, impl, state } = op;
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    const declaredPath = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const pathParams = impl?.schema?.params
      ? parameters(impl.schema.params, 'path', components)
      : declaredPath.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = {
      operationId: operationIdOf(spec),
      'x-operation': spec.id,
      summary: spec.summary,
      tags: [spec.deployable],
      'x-state': state,
      'x-auth': spec.auth,
      ...(spec.permission ? { 'x-permission': spec.permission } : {}),
      ...(spec.scope ? { 'x-verification-scope': spec.scope } : {}),
      ...(spec.plugin ? { 'x-plugin': spec.plugin.key, 'x-plugin-version': spec.plugin.version } : {}),
      ...(impl?.metering ? { 'x-metering': impl.metering } : {}),
      ...(impl?.cancellable ? { 'x-cancellable': true } : {}),
      parameters: [...pathParams, ...parameters(impl?.schema?.querystring, 'query', components)],
      ...(impl?.schema?.body
        ? { requestBody: { required: true, content: { [impl.multipart ? 'multipart/form-data' : 'application/json']: { schema: toDocument(impl.schema.body, components) } } } }
        : {}),
      ...(spec.auth === 'none' ? {} : { security: [{ bearer: [] }] }),
      responses: mergeResponses(successResponses(op, components), errorResponses(op)),
    };
  }
  return {
    openapi: '3.1.0',
    info: { title, version: '0.1.0' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } }, schemas: components },
    paths,
  };
}
