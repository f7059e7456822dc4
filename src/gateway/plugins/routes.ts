import { Type } from '@sinclair/typebox';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import type { PluginService } from './service.js';
import type { TaskFilter } from './store.js';
import { answers, pluginErrors } from './schemas.js';

const Key = Type.String({ pattern: '^[a-z][a-z0-9-]{1,63}$' });
const Version = Type.String({ pattern: '^\\d{1,9}\\.\\d{1,9}\\.\\d{1,9}(-[0-9A-Za-z.-]{1,40})?$' });
const Flag = Type.Optional(Type.Boolean());

/** G72–G77 (root) and G84 (admin + TaskPluginBind): task plugin administration; GS03 lists their tasks. */
export function pluginRoutes(plugins: PluginService) {
  return [
    implement('G72', {
      data: answers.G72,
      errors: pluginErrors,
      schema: {
        params: Type.Object({ key: Key }),
        querystring: Type.Object({ cascade: Flag, force: Flag }),
        body: Type.Object({ enabled: Type.Boolean() }),
      },
      handler: async (req) => ok(await plugins.setStatus(staffOf(req), req.params.key, req.body.enabled, !!req.query.cascade, !!req.query.force)),
    }),
    implement('G73', {
      data: answers.G73,
      errors: pluginErrors,
      schema: { params: Type.Object({ key: Key }) },
      handler: async (req) => ok(await plugins.versions(req.params.key)),
    }),
    implement('G74', {
      data: answers.G74,
      errors: pluginErrors,
      schema: { params: Type.Object({ key: Key, version: Version }), querystring: Type.Object({ force: Flag }) },
      handler: async (req) => ok(await plugins.deleteVersion(staffOf(req), req.params.key, req.params.version, !!req.query.force)),
    }),
    implement('G75', {
      data: answers.G75,
      errors: pluginErrors,
      handler: async () => ok(await plugins.sources()),
    }),
    implement('G76', {
      data: answers.G76,
      errors: pluginErrors,
      schema: {
        body: Type.Array(Type.Object({ name: Type.String({ maxLength: 200 }), index_url: Type.String({ maxLength: 2048 }) }), { maxItems: 1000 }),
      },
      handler: async (req) => ok(await plugins.setSources(staffOf(req), req.body)),
    }),
    implement('G77', {
      data: answers.G77,
      errors: pluginErrors,
      handler: async () => ok(await plugins.runtimeStatus()),
    }),
    implement('G84', {
      data: answers.G84,
      errors: pluginErrors,
      handler: async () => ok(await plugins.options()),
    }),
    implement('GS03', {
      data: answers.GS03,
      errors: pluginErrors,
      schema: {
        querystring: Type.Object({
          p: Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 }),
          page_size: Type.Integer({ minimum: 1, maximum: 100, default: 20 }),
          plugin: Type.Optional(Key),
          status: Type.Optional(Type.Union(['queued', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s)))),
          owner: Type.Optional(Type.String({ minLength: 1, maxLength: 64 })),
        }),
      },
      handler: async (req) => {
        const { p, page_size, ...filter } = req.query;
        return ok(await plugins.tasks(filter as TaskFilter, p, page_size));
      },
    }),
  ];
}
