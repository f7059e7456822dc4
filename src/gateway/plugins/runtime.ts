import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RegisteredOperation } from '../../contract/registry.js';
import type { OperationImpl, OperationState } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { ok } from '../../kit/http/envelope.js';
import type { PluginPackage } from './loader.js';
import { partSchema, type PluginRoute } from './manifest.js';
import { answers, pluginErrors } from './schemas.js';

/** Without a task_plugins row, installed plugins run and shipped (factory) ones wait for G72. */
export function defaultEnabled(pkg: Pick<PluginPackage, 'layer'>): boolean {
  return pkg.layer === 'installed';
}

/** What a route of a running plugin needs from the gateway: checks, task records, enabled state. */
export interface RouteRunner {
  gate(pkg: PluginPackage, req: FastifyRequest): Promise<void>;
  run(pkg: PluginPackage, route: PluginRoute, req: FastifyRequest, reply: FastifyReply): Promise<unknown>;
}

export function isCancellable(pkg: PluginPackage, route: PluginRoute): boolean {
  const task = route.task ?? 'none';
  return task === 'cancel' || (task === 'create' && pkg.manifest.routes.some((r) => r.task === 'cancel'));
}

/**
 * The routes of the running plugin versions as registry operations, ids `plugin:<key>:<n>` (n = the
 * route's place in the manifest). Without a runner (manifest and docs) the handlers are never called.
 */
export function pluginOperations(active: Iterable<PluginPackage>, enabled: (pkg: PluginPackage) => boolean, runner?: RouteRunner): RegisteredOperation[] {
  const ops: RegisteredOperation[] = [];
  const sorted = [...active].sort((a, b) => (a.manifest.key < b.manifest.key ? -1 : 1));
  for (const pkg of sorted) {
    const { key, version } = pkg.manifest;
    pkg.manifest.routes.forEach((route, i) => {
      const fields = route.fields ?? [];
      const hasBody = route.method !== 'GET' && route.method !== 'DELETE';
      const impl: OperationImpl<any> = {
        id: `plugin:${key}:${i + 1}`,
        schema: {
          params: partSchema(fields, 'path'),
          querystring: partSchema(fields, 'query'),
          ...(hasBody ? { body: partSchema(fields, 'body') } : {}),
        },
        metering: route.metering,
        cancellable: isCancellable(pkg, route),
        data: (route.task ?? 'none') === 'none' ? answers.route : answers.taskRoute,
        errors: pluginErrors,
        gate: runner ? (req) => runner.gate(pkg, req) : undefined,
        handler: async (req, reply) => {
          if (!runner) throw new AppError('NOT_IMPLEMENTED', { params: { operation: impl.id } });
          return runner.run(pkg, route, req, reply);
        },
      };
      const state: OperationState = enabled(pkg) ? 'implemented' : 'disabled';
      ops.push({
        spec: {
          id: impl.id,
          method: route.method,
          path: route.path,
          deployable: 'gateway',
          auth: route.auth,
          ...(route.permission ? { permission: route.permission } : {}),
          summary: `${route.summary} (task plugin ${key})`,
          plugin: { key, version },
        },
        impl,
        state,
      });
    });
  }
  return ops;
}

/** The envelope of a plugin route's answer: the plugin's fields, then the runtime's (which win). */
export function envelopeOf(out: unknown, own: Record<string, unknown> = {}) {
  const extra = out && typeof out === 'object' && !Array.isArray(out) ? (out as Record<string, unknown>) : out === undefined ? {} : { result: out };
  return ok({ ...extra, ...own });
}
