import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { LocalModelService } from './service.js';
import { gatewayErrors } from '../schemas.js';

/** Model names as Ollama takes them: `[registry/][namespace/]name[:tag]`. */
const ModelBody = Type.Object({
  channel_id: Type.Integer({ minimum: 1, maximum: 2 ** 53 - 1 }),
  model_name: Type.String({ minLength: 1, maxLength: 255, pattern: '^[A-Za-z0-9][A-Za-z0-9._:/@+-]*$' }),
});

/** Ollama local models (G22–G25). */
export function localModelRoutes(local: LocalModelService): OperationImpl<any>[] {
  return [
    implement('G22', {
      data: Type.Object({ model_name: Type.String() }),
      errors: gatewayErrors.localModels,
      schema: { body: ModelBody },
      handler: async (req) => {
        await local.remove(staffOf(req), req.body.channel_id, req.body.model_name);
        return ok({ model_name: req.body.model_name }, `Model ${req.body.model_name} deleted successfully`);
      },
    }),
    implement('G23', {
      data: Type.Object({ model_name: Type.String() }),
      errors: gatewayErrors.localModels,
      schema: { body: ModelBody },
      handler: async (req) => {
        await local.pull(staffOf(req), req.body.channel_id, req.body.model_name);
        return ok({ model_name: req.body.model_name }, `Model ${req.body.model_name} pulled successfully`);
      },
    }),
    implement('G24', {
      answers: { 200: { description: 'Server-sent events: each progress line of the pull, the outcome, then [DONE]', stream: true } },
      errors: gatewayErrors.localModels,
      schema: { body: ModelBody },
      handler: async (req, reply) => {
        const abort = new AbortController();
        const events = await local.pullStream(staffOf(req), req.body.channel_id, req.body.model_name, abort.signal);
        // From here the answer is a stream: 200 and Server-Sent Events, each progress line, the final
        // outcome, then [DONE]. A client that leaves aborts the upstream pull.
        reply.hijack();
        const raw = reply.raw;
        raw.on('close', () => abort.abort());
        raw.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache, no-store', 'x-accel-buffering': 'no' });
        for await (const e of events) {
          if (raw.destroyed) break;
          raw.write(`data: ${JSON.stringify(e)}\n\n`);
        }
        if (!raw.destroyed) raw.end('data: [DONE]\n\n');
      },
    }),
    implement('G25', {
      data: Type.Object({ version: Type.String() }),
      errors: gatewayErrors.localModels,
      schema: { params: IdParams },
      handler: async (req) => {
        const version = await local.version(staffOf(req), req.params.id);
        return { ...ok({ version }), version };
      },
    }),
  ];
}
