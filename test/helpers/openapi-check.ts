import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { accountOperations } from '../../src/account/app.js';
import { gatewayOperations } from '../../src/gateway/app.js';
import { edgeOperations } from '../../src/edge/app.js';
import { aliasRoutes } from '../../src/contract/coverage.js';
import { buildOpenApi } from '../../src/contract/openapi.js';
import type { ApiSample } from './api-samples.js';

export type OpenApiDocument = ReturnType<typeof buildOpenApi>;

/** The three documents as the services serve them (built from the registry, no server needed). */
export function documents(): Record<'account' | 'gateway' | 'edge', OpenApiDocument> {
  return {
    account: buildOpenApi('Account API', accountOperations()),
    gateway: buildOpenApi('Gateway API', gatewayOperations()),
    edge: buildOpenApi('Edge API', edgeOperations()),
  };
}

interface Route {
  service: string;
  method: string;
  pattern: RegExp;
  /** Path parameters: a route with fewer wins (a static segment before a parameter, as the router does). */
  params: number;
  operationId: string;
  op: any;
}

const patternOf = (template: string) => new RegExp(`^${template.replace(/\{\w+\}|:\w+/g, '[^/]+').replace(/\/+$/, '')}/?$`);

function routesOf(docs: Record<string, OpenApiDocument>): Route[] {
  const routes: Route[] = [];
  for (const [service, doc] of Object.entries(docs)) {
    for (const [path, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods as Record<string, any>)) {
        routes.push({ service, method: method.toUpperCase(), pattern: patternOf(path), params: (path.match(/\{/g) ?? []).length, operationId: op.operationId, op });
      }
    }
  }
  // The reference's other spellings are answered by their operation.
  for (const service of ['account', 'gateway', 'edge'] as const) {
    for (const alias of aliasRoutes(service)) {
      const target = routes.find((r) => r.service === service && r.op['x-operation'] === alias.servedBy)!;
      routes.push({ ...target, pattern: patternOf(alias.path), params: 0 });
    }
  }
  return routes.sort((a, b) => a.params - b.params);
}

/** The shared shapes whose objects stay open (an answer may add top-level fields beside the envelope's). */
const OPEN = new Set(['Envelope', 'Error', 'OpenAIError', 'AnthropicError', 'GeminiError']);

/**
 * The schema with every object that does not say otherwise closed (additionalProperties: false), so an
 * answer with a field the document does not list fails: the document stays complete. Members of an
 * allOf stay open (each lists only its part).
 */
export function closeObjects(schema: any, inAllOf = false): any {
  if (Array.isArray(schema)) return schema.map((s) => closeObjects(s, inAllOf));
  if (!schema || typeof schema !== 'object') return schema;
  const out: any = {};
  for (const [k, v] of Object.entries(schema)) {
    if (k === 'allOf') out[k] = (v as any[]).map((x) => closeObjects(x, true));
    else if (k === 'properties' || k === '$defs' || k === 'patternProperties') out[k] = Object.fromEntries(Object.entries(v as object).map(([n, x]) => [n, closeObjects(x)]));
    else if (k === 'items' || k === 'anyOf' || k === 'oneOf' || k === 'additionalProperties' || k === 'not') out[k] = closeObjects(v);
    else out[k] = v;
  }
  if (!inAllOf && out.type === 'object' && out.properties && !('additionalProperties' in out)) out.additionalProperties = false;
  return out;
}

export interface SampleFailure {
  operationId: string;
  status: number;
  path: string;
  problem: string;
}

/**
 * Checks answers against the documents: each answer of an operation needs its status listed (or a
 * `default`) and a body its schema accepts. Answers of other paths (health, metrics, unknown routes)
 * are not operations and are skipped. Returns the failures (one per operation, status and problem) and
 * the operations seen.
 */
export function checkSamples(samples: ApiSample[], docs: Record<string, OpenApiDocument> = documents()) {
  const ajv = new Ajv2020({ strict: false, allErrors: false, validateFormats: false });
  for (const [service, doc] of Object.entries(docs)) {
    const schemas = Object.fromEntries(Object.entries(doc.components.schemas).map(([name, s]) => [name, OPEN.has(name) ? s : closeObjects(s)]));
    ajv.addSchema({ $id: `https://openapi.test/${service}`, components: { schemas } });
  }
  const compiled = new Map<object, ValidateFunction>();
  const validatorOf = (service: string, schema: object) => {
    let v = compiled.get(schema);
    if (!v) {
      // Component references resolve against the service's document.
      const text = JSON.stringify(schema).replaceAll('"#/components/', `"https://openapi.test/${service}#/components/`);
      v = ajv.compile(closeObjects(JSON.parse(text)));
      compiled.set(schema, v);
    }
    return v;
  };
  const routes = routesOf(docs);
  const failures = new Map<string, SampleFailure>();
  const seen = new Map<string, Set<number>>();
  for (const s of samples) {
    const path = s.path.split('?')[0]!;
    const matching = routes.filter((r) => r.method === s.method && r.pattern.test(path));
    // Services share some paths (new-api's dashboard calls the gateway's /api/channel/* on the account
    // service too): the sample belongs to the one whose document lists its status and code.
    const code0 = (s.body as any)?.code ?? (s.body as any)?.error?.code;
    const fits = (r: Route) => {
      const documented = r.op.responses[String(s.status)];
      return code0 === undefined ? !!documented : !!documented?.['x-codes']?.includes(code0);
    };
    const route = matching.find(fits) ?? matching.find((r) => r.op['x-state'] !== 'placeholder') ?? matching[0];
    if (!route) continue;
    const statuses = seen.get(route.operationId) ?? new Set<number>();
    statuses.add(s.status);
    seen.set(route.operationId, statuses);
    const code = (s.body as any)?.code ?? (s.body as any)?.error?.code;
    // An upstream's failure keeps the upstream's status: its codes are listed under `default`.
    const own = route.op.responses[String(s.status)];
    const passed = route.op.responses.default;
    const response = own && !(passed && own['x-codes'] && !own['x-codes'].includes(code) && passed['x-codes'].includes(code)) ? own : passed;
    const fail = (problem: string) => {
      const key = `${route.operationId} ${s.status} ${problem}`;
      if (!failures.has(key)) failures.set(key, { operationId: route.operationId, status: s.status, path: s.path, problem });
    };
    if (!response) {
      fail(`status ${s.status} is not documented (code ${(s.body as any)?.code ?? (s.body as any)?.error?.code ?? '-'})`);
      continue;
    }
    if (response['x-codes'] && typeof code === 'string' && !response['x-codes'].includes(code)) {
      fail(`code ${code} is not documented for status ${s.status}`);
      continue;
    }
    const schema = response.content?.['application/json']?.schema;
    if (!schema) {
      fail('a JSON body where the document has none');
      continue;
    }
    const validate = validatorOf(route.service, schema);
    if (!validate(s.body)) {
      const e = validate.errors?.[0];
      fail(`${e?.instancePath || '/'} ${e?.message ?? 'is invalid'}${e?.params ? ' ' + JSON.stringify(e.params) : ''}`);
    }
  }
  return { failures: [...failures.values()], seen };
}
