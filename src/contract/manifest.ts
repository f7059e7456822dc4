import type { TSchema } from '@sinclair/typebox';
import type { RegisteredOperation } from './registry.js';

export interface ManifestEntry {
  method: string;
  path: string;
  operation: string;
  deployable: string;
  summary: string;
  auth: string;
  permission: string | null;
  scope: string | null;
  fields: { in: 'body' | 'query' | 'path'; name: string; type: string; required: boolean }[];
  state: string;
  plugin: string | null;
  version: string | null;
  metering: string | null;
  cancellable: boolean;
  addition: boolean;
}

function fieldsOf(schema: TSchema | undefined, where: 'body' | 'query' | 'path') {
  const props = (schema as { properties?: Record<string, TSchema> } | undefined)?.properties ?? {};
  const required = new Set<string>((schema as { required?: string[] } | undefined)?.required ?? []);
  return Object.entries(props).map(([name, s]) => ({
    in: where,
    name,
    type: String((s as { type?: unknown }).type ?? (s.anyOf ? 'any' : 'any')),
    required: required.has(name),
  }));
}

/** The route manifest SPEC asks every deployment to export. */
export function buildManifest(ops: RegisteredOperation[]): ManifestEntry[] {
  return ops.map(({ spec, impl, state }) => ({
    method: spec.method,
    path: spec.path,
    operation: spec.id,
    deployable: spec.deployable,
    summary: spec.summary,
    auth: spec.auth,
    permission: spec.permission ?? null,
    scope: spec.scope ?? (spec.verification ? 'sensitive-operation verification' : null),
    fields: [
      ...fieldsOf(impl?.schema?.params, 'path'),
      ...fieldsOf(impl?.schema?.querystring, 'query'),
      ...fieldsOf(impl?.schema?.body, 'body'),
    ],
    state,
    plugin: spec.plugin?.key ?? null,
    version: spec.plugin?.version ?? null,
    metering: impl?.metering ?? null,
    cancellable: impl?.cancellable ?? false,
    addition: spec.addition ?? false,
  }));
}
