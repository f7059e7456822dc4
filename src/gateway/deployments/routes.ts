import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { UpstreamError } from '../../kit/upstream/errors.js';
import { staffOf } from '../auth.js';
import type { DeploymentService } from './service.js';
import { answers, deploymentErrors } from './schemas.js';

const Id = Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9_.-]+$' });
const Pos = (max = 1_000_000) => Type.Integer({ minimum: 1, maximum: max });
const Page = { p: Type.Optional(Pos()), page_size: Type.Optional(Pos(1000)) };
const KeyBody = Type.Object({ api_key: Type.Optional(Type.String({ maxLength: 4096 })) });
const Env = Type.Record(Type.String({ maxLength: 256 }), Type.String({ maxLength: 32768 }), { maxProperties: 200 });
const Strings = Type.Array(Type.String({ maxLength: 4096 }), { maxItems: 100 });

const CreateBody = Type.Object({
  resource_private_name: Type.String({ minLength: 1, maxLength: 128 }),
  duration_hours: Pos(100_000),
  gpus_per_container: Pos(64),
  hardware_id: Pos(),
  location_ids: Type.Array(Pos(), { minItems: 1, maxItems: 100 }),
  container_config: Type.Object({
    replica_count: Pos(1000),
    env_variables: Type.Optional(Env),
    secret_env_variables: Type.Optional(Env),
    entrypoint: Type.Optional(Strings),
    args: Type.Optional(Strings),
    traffic_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
  }),
  registry_config: Type.Object({
    image_url: Type.String({ minLength: 1, maxLength: 2048 }),
    registry_username: Type.Optional(Type.String({ maxLength: 256 })),
    registry_secret: Type.Optional(Type.String({ maxLength: 4096 })),
  }),
});

const UpdateBody = Type.Object(
  {
    env_variables: Type.Optional(Env),
    secret_env_variables: Type.Optional(Env),
    entrypoint: Type.Optional(Strings),
    args: Type.Optional(Strings),
    traffic_port: Type.Optional(Type.Integer({ minimum: 1, maximum: 65535 })),
    image_url: Type.Optional(Type.String({ minLength: 1, maxLength: 2048 })),
    registry_username: Type.Optional(Type.String({ maxLength: 256 })),
    registry_secret: Type.Optional(Type.String({ maxLength: 4096 })),
    command: Type.Optional(Type.String({ maxLength: 4096 })),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** Deployments on io.net (G41–G59). */
export function deploymentRoutes(deployments: DeploymentService): OperationImpl<any>[] {
  return [
    implement('G41', {
      data: answers.G41,
      errors: deploymentErrors,
      schema: { querystring: Type.Object({ status: Type.Optional(Type.String({ maxLength: 64 })), ...Page }) },
      handler: async (req) => ok(await deployments.list(req.query)),
    }),
    implement('G56', {
      data: answers.G56,
      errors: deploymentErrors,
      schema: { querystring: Type.Object({ status: Type.Optional(Type.String({ maxLength: 64 })), keyword: Type.Optional(Type.String({ maxLength: 128 })), ...Page }) },
      handler: async (req) => ok(await deployments.list(req.query)),
    }),
    implement('G44', {
      data: answers.G44,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }) },
      handler: async (req) => ok(await deployments.get(req.params.id)),
    }),
    implement('G42', {
      data: answers.G42,
      errors: deploymentErrors,
      schema: { body: CreateBody },
      handler: async (req) => ok(await deployments.create(staffOf(req), req.body)),
    }),
    implement('G45', {
      data: answers.G45,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }), body: UpdateBody },
      handler: async (req) => ok(await deployments.update(staffOf(req), req.params.id, req.body)),
    }),
    implement('G43', {
      data: answers.G43,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }) },
      handler: async (req) => ok(await deployments.remove(staffOf(req), req.params.id)),
    }),
    implement('G48', {
      data: answers.G48,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }), body: Type.Object({ duration_hours: Pos(100_000) }) },
      handler: async (req) => ok(await deployments.extend(staffOf(req), req.params.id, req.body.duration_hours)),
    }),
    implement('G50', {
      data: answers.G50,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }), body: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }) },
      handler: async (req) => ok(await deployments.rename(staffOf(req), req.params.id, req.body.name.trim())),
    }),
    implement('G46', {
      data: answers.G46,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id }) },
      handler: async (req) => ok(await deployments.containers(req.params.id)),
    }),
    implement('G47', {
      data: answers.G47,
      errors: deploymentErrors,
      schema: { params: Type.Object({ id: Id, container_id: Id }) },
      handler: async (req) => ok(await deployments.container(req.params.id, req.params.container_id)),
    }),
    implement('G49', {
      data: answers.G49,
      answers: { 200: { description: 'follow=true: server-sent events, one per log line, then a final event and [DONE]', stream: true } },
      errors: deploymentErrors,
      schema: {
        params: Type.Object({ id: Id }),
        querystring: Type.Object({
          container_id: Id,
          level: Type.Optional(Type.String({ maxLength: 32 })),
          stream: Type.Optional(Type.String({ maxLength: 32 })),
          cursor: Type.Optional(Type.String({ maxLength: 512 })),
          limit: Type.Optional(Pos(1000)),
          follow: Type.Optional(Type.Boolean()),
          start_time: Type.Optional(Type.String({ maxLength: 64 })),
          end_time: Type.Optional(Type.String({ maxLength: 64 })),
        }),
      },
      handler: async (req, reply) => {
        if (!req.query.follow) return ok(await deployments.logs(req.params.id, req.query));
        const abort = new AbortController();
        const { io, stream } = await deployments.followLogs(req.params.id, req.query, abort.signal);
        // A followed log is Server-Sent Events: one event per line, then a final event and [DONE].
        reply.hijack();
        const raw = reply.raw;
        raw.on('close', () => abort.abort());
        raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' });
        let end: Record<string, unknown> = { success: true, message: 'log stream ended' };
        try {
          for await (const line of stream.lines()) {
            if (raw.destroyed) break;
            if (line.trim()) raw.write(`data: ${JSON.stringify({ message: io.scrub(line) })}\n\n`);
          }
        } catch (e) {
          end = { success: false, error: e instanceof UpstreamError ? e.kind : 'error', message: 'the log stream failed' };
        } finally {
          stream.close();
        }
        if (!raw.destroyed) raw.end(`data: ${JSON.stringify(end)}\n\ndata: [DONE]\n\n`);
      },
    }),
    implement('G51', {
      data: answers.G51,
      errors: deploymentErrors,
      schema: { querystring: Type.Object({ hardware_id: Pos(), gpu_count: Type.Optional(Pos(64)) }) },
      handler: async (req) => ok(await deployments.availableReplicas(req.query.hardware_id, req.query.gpu_count ?? 1)),
    }),
    implement('G52', {
      data: answers.G52,
      errors: deploymentErrors,
      schema: { querystring: Type.Object({ name: Type.String({ minLength: 1, maxLength: 128 }) }) },
      handler: async (req) => ok(await deployments.checkName(req.query.name.trim())),
    }),
    implement('G53', { data: answers.G53, errors: deploymentErrors, handler: async () => ok(await deployments.hardwareTypes()) }),
    implement('G54', { data: answers.G54, errors: deploymentErrors, handler: async () => ok(await deployments.locations()) }),
    implement('G55', {
      data: answers.G55,
      errors: deploymentErrors,
      schema: {
        body: Type.Object({
          location_ids: Type.Array(Pos(), { minItems: 1, maxItems: 100 }),
          hardware_id: Pos(),
          replica_count: Pos(1000),
          gpus_per_container: Type.Optional(Pos(64)),
          duration_hours: Type.Optional(Pos(100_000)),
          duration_type: Type.Optional(Type.String({ maxLength: 16, pattern: '^(hour|day|week|month)(s|ly)?$|^daily$' })),
          duration_qty: Type.Optional(Pos(100_000)),
          hardware_qty: Type.Optional(Pos(1000)),
          currency: Type.Optional(Type.String({ maxLength: 16, pattern: '^[A-Za-z]+$' })),
        }),
      },
      handler: async (req) => ok(await deployments.priceEstimation(req.body)),
    }),
    implement('G57', { data: answers.G57, errors: deploymentErrors, handler: async () => ok(await deployments.settings()) }),
    implement('G58', {
      data: answers.G58,
      errors: deploymentErrors,
      schema: { body: KeyBody },
      noStore: true,
      handler: async (req) => ok(await deployments.testConnection(staffOf(req), 'G58', req.body.api_key)),
    }),
    implement('G59', {
      data: answers.G59,
      errors: deploymentErrors,
      schema: { body: KeyBody },
      noStore: true,
      handler: async (req) => ok(await deployments.testConnection(staffOf(req), 'G59', req.body.api_key)),
    }),
  ];
}
