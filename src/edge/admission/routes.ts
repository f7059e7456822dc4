import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import type { AdmissionService } from './service.js';

const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;
const TRACEPARENT = /^00-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

function idempotencyKeyOf(req: FastifyRequest): string {
  const v = req.headers['idempotency-key'];
  if (v === undefined || v === '') throw new AppError('idempotency_key_required');
  if (typeof v !== 'string' || !IDEMPOTENCY_KEY.test(v)) throw new AppError('invalid_idempotency_key');
  return v;
}

/** W3C trace context, version 00 only: lower-case hex, trace-id and parent-id not all zeros. */
export function parseTraceparent(v: unknown): string | null {
  if (v === undefined) return null;
  const m = typeof v === 'string' ? TRACEPARENT.exec(v) : null;
  if (!m || /^0+$/.test(m[1]!) || /^0+$/.test(m[2]!)) throw new AppError('invalid_traceparent');
  return v as string;
}

/** The text field is `input` (as in OpenAI's Responses API); other fields are refused, not ignored. */
const body = Type.Object(
  {
    publicModelId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:/-]+$' }),
    input: Type.String({ minLength: 1, maxLength: 100_000, pattern: '\\S' }),
  },
  { additionalProperties: false },
);

export function admissionRoutes(ctx: EdgeContext, admission: AdmissionService) {
  return [
    implement('E01', {
      schema: { body },
      noStore: true,
      metering: 'reservation of the public model\'s reserve amount',
      // After the key check, before the body is read: a disabled edge answers the same to every request,
      // and header faults are reported before body faults.
      gate: async (req) => {
        if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
        idempotencyKeyOf(req);
        parseTraceparent(req.headers.traceparent);
      },
      handler: async (req, reply) => {
        const idempotencyKey = idempotencyKeyOf(req);
        const traceparent = parseTraceparent(req.headers.traceparent);
        const { admission: answer, replayed } = await admission.admit({
          apiVersion: 'v1',
          identity: identityOf(req),
          requestId: req.id,
          idempotencyKey,
          traceparent,
          body: { publicModelId: req.body.publicModelId, input: req.body.input },
        });
        if (replayed) reply.header('Idempotent-Replayed', 'true');
        reply.status(202);
        return answer;
      },
    }),
  ];
}
