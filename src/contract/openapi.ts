import type { TSchema } from '@sinclair/typebox';
import type { RegisteredOperation } from './registry.js';

const envelope = {
  type: 'object',
  properties: {
    success: { type: 'boolean' },
    message: { type: 'string' },
    code: { type: 'string' },
    data: {},
  },
  required: ['success', 'message'],
};

function parameters(schema: TSchema | undefined, where: 'path' | 'query') {
  const props = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const required = new Set<string>((schema as { required?: string[] } | undefined)?.required ?? []);
  return Object.entries(props).map(([name, s]) => ({
    name,
    in: where,
    required: where === 'path' || required.has(name),
    schema: s,
  }));
}

/** The edge's error body (OpenAI style). */
const openAiError = {
  type: 'object',
  properties: {
    error: {
      type: 'object',
      properties: { message: { type: 'string' }, type: { type: 'string' }, code: { type: 'string' }, param: { type: 'string', nullable: true } },
      required: ['message', 'type', 'code'],
    },
    requestId: { type: 'string' },
  },
  required: ['error', 'requestId'],
};

/** OpenAPI 3 document of one deployable, generated from the registry. */
export function buildOpenApi(title: string, ops: RegisteredOperation[]) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const { spec, impl, state } of ops) {
    const path = spec.path.replace(/:(\w+)/g, '{$1}');
    const declaredPath = [...spec.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
    const pathParams = impl?.schema?.params
      ? parameters(impl.schema.params, 'path')
      : declaredPath.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
    paths[path] ??= {};
    paths[path][spec.method.toLowerCase()] = {
      operationId: spec.id,
      summary: spec.summary,
      tags: [spec.deployable],
      'x-state': state,
      'x-auth': spec.auth,
      ...(spec.permission ? { 'x-permission': spec.permission } : {}),
      ...(spec.scope ? { 'x-verification-scope': spec.scope } : {}),
      ...(spec.plugin ? { 'x-plugin': spec.plugin.key, 'x-plugin-version': spec.plugin.version } : {}),
      ...(impl?.metering ? { 'x-metering': impl.metering } : {}),
      ...(impl?.cancellable ? { 'x-cancellable': true } : {}),
      parameters: [...pathParams, ...parameters(impl?.schema?.querystring, 'query')],
      ...(impl?.schema?.body
        ? { requestBody: { required: true, content: { 'application/json': { schema: impl.schema.body } } } }
        : {}),
      ...(spec.auth === 'none' ? {} : { security: [{ bearer: [] }] }),
      responses:
        spec.deployable === 'edge'
          ? {
              default: { description: 'Error {error: {message, type, code, param}, requestId}', content: { 'application/json': { schema: openAiError } } },
              ...(state === 'placeholder' ? { '501': { description: 'api_not_implemented (placeholder route)' } } : {}),
            }
          : {
              default: { description: 'Envelope {success, message, data, code}', content: { 'application/json': { schema: envelope } } },
              ...(state === 'planned' ? { '501': { description: 'NOT_IMPLEMENTED' } } : {}),
            },
    };
  }
  return {
    openapi: '3.0.3',
    info: { title, version: '0.1.0' },
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
    paths,
  };
}
