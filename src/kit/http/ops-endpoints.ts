import type { FastifyInstance } from 'fastify';
import { Registry, collectDefaultMetrics } from 'prom-client';
import { deferredCounter } from '../metrics/deferred-counter.js';
import { deferredHistogram } from '../metrics/deferred-histogram.js';
import { opsAccessGuard, type OpsAccess } from './ops-access.js';

export interface OpsEndpointOptions {
  name: string;
  /** Each check throws when its dependency is not ready. */
  readiness: Record<string, () => Promise<void>>;
  openapi: () => unknown | Promise<unknown>;
  /** Who may read /metrics and /api/openapi.json; /healthz and /readyz answer anyone. */
  access: OpsAccess;
}

/** /healthz, /readyz, /metrics (Prometheus) and /api/openapi.json (behind `access`) for one deployable. */
export function installOpsEndpoints(app: FastifyInstance, opts: OpsEndpointOptions): Registry {
  const registry = new Registry();
  registry.setDefaultLabels({ deployable: opts.name });
  collectDefaultMetrics({ register: registry });
  // Beside the operation id, the method and the route pattern (never the raw URL: one series per route);
  // requests no route matched share route="unmatched".
  const requests = deferredCounter({
    name: 'http_requests_total',
    help: 'HTTP requests by operation, method, route pattern and status',
    labelNames: ['operation', 'method', 'route', 'status'] as const,
    registers: [registry],
  });
  const duration = deferredHistogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by operation, method and route pattern',
    labelNames: ['operation', 'method', 'route'] as const,
    buckets: [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  const requestCounters = requests.of;
  const durations = duration.of;
  app.addHook('onResponse', (req, reply, done) => {
    const { config, url } = req.routeOptions;
    const operation = (config as { operationId?: string } | undefined)?.operationId ?? 'other';
    const route = url ?? 'unmatched';
    requestCounters(operation, req.method, route, String(reply.statusCode)).inc();
    durations(operation, req.method, route).observe(reply.elapsedTime / 1000);
    done();
  });
  app.fastLane?.observe((operation, method, route, status, seconds) => {
    requestCounters(operation, method, route, String(status)).inc();
    durations(operation, method, route).observe(seconds);
  });

  app.get('/healthz', async () => ({ success: true, message: '', data: { status: 'ok' } }));
  app.get('/readyz', async (_req, reply) => {
    const checks: Record<string, string> = {};
    let ready = true;
    for (const [name, check] of Object.entries(opts.readiness)) {
      try {
        await check();
        checks[name] = 'ok';
      } catch {
        checks[name] = 'unavailable';
        ready = false;
      }
    }
    reply.status(ready ? 200 : 503);
    return { success: ready, message: ready ? '' : 'not ready', data: checks };
  });
  const guarded = { preHandler: opsAccessGuard(opts.access) };
  app.get('/metrics', guarded, async (_req, reply) => {
    reply.header('Content-Type', registry.contentType);
    return registry.metrics();
  });
  // Built once; a deployable whose document changes while it runs (states read from its database) passes
  // a function returning a promise, called for each request.
  const doc = opts.openapi();
  if (doc instanceof Promise) doc.catch(() => {});
  app.get('/api/openapi.json', guarded, async () => (doc instanceof Promise ? opts.openapi() : doc));
  return registry;
}
