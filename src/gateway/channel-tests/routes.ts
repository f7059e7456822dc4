import { Type } from '@sinclair/typebox';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { staffOf } from '../auth.js';
import { IdParams } from '../channels/schemas.js';
import type { ChannelTestService } from './service.js';
import { ChannelTestAnswer, JobStarted, gatewayErrors } from '../schemas.js';

/** Channel tests: one channel now (G34), all channels as a background job (G33). */
export function channelTestRoutes(tests: ChannelTestService): OperationImpl<any>[] {
  return [
    implement('G34', {
      answers: { 200: { description: 'The test ran: success says how the upstream answered (error_code when it failed)', schema: ChannelTestAnswer } },
      errors: gatewayErrors.channelTests,
      schema: {
        params: IdParams,
        querystring: Type.Object({
          model: Type.Optional(Type.String({ maxLength: 255 })),
          endpoint_type: Type.Optional(Type.String({ maxLength: 64 })),
          stream: Type.Optional(Type.Boolean()),
          key_index: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
        }),
      },
      handler: async (req) => {
        const r = await tests.testOne(staffOf(req), req.params.id, req.query);
        const time = r.ms / 1000;
        const data = { channel_id: req.params.id, model: r.model, endpoint_type: r.endpoint, stream: r.stream, key_index: r.keyIndex, time, response_time: r.ms };
        // A test that ran answers 200 either way (as the reference): success says how the upstream answered.
        if (r.outcome.ok) return { success: true, message: '', time, data };
        return { success: false, message: r.outcome.message, error_code: r.outcome.errorCode, time, data: { ...data, upstream_status: r.outcome.status ?? null } };
      },
    }),
    implement('G33', {
      data: JobStarted,
      errors: gatewayErrors.channelTests,
      schema: { querystring: Type.Object({ mode: Type.Optional(Type.Union([Type.Literal('all'), Type.Literal('recovery')])) }) },
      handler: async (req) => ok(await tests.startAll(staffOf(req), req.query.mode ?? 'all')),
    }),
  ];
}
