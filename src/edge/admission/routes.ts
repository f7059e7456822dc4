import { Type } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { AppError } from '../../kit/http/errors.js';
import { identityOf } from '../auth.js';
import type { EdgeContext } from '../context.js';
import { answerCall } from '../calls/answer.js';
import type { SyncCalls } from '../calls/service.js';
import type { AdmissionService } from './service.js';
import { OpenAIResponse } from '../../contract/wire-schemas.js';
import { Admission, edgeErrors } from '../schemas.js';

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

/** SPEC's admission body: the text field is `input` (as in OpenAI's Responses API); other fields are refused, not ignored. */
const admissionBody = Type.Object(
  {
    publicModelId: Type.String({ minLength: 1, maxLength: 128, pattern: '^[A-Za-z0-9._:/-]+$' }),
    input: Type.String({ minLength: 1, maxLength: 100_000, pattern: '\\S' }),
  },
  { additionalProperties: false },
);
const checkAdmission = TypeCompiler.Compile(admissionBody);

/**
 * How E01 tells its two bodies apart: an object with `model` and without `publicModelId` is an OpenAI
 * Responses request, answered at once; anything else is SPEC's admission body, checked strictly.
 */
export function isOpenAiResponses(body: unknown): body is Record<string, unknown> {
  return !!body && typeof body === 'object' && !Array.isArray(body) && 'model' in body && !('publicModelId' in body);
}

function admissionBodyOf(body: unknown): { publicModelId: string; input: string } {
  const isObject = !!body && typeof body === 'object' && !Array.isArray(body);
  const extra = isObject ? Object.keys(body).find((k) => k !== 'publicModelId' && k !== 'input') : undefined;
  if (extra !== undefined) throw new AppError('invalid_request_body', { params: { detail: `${extra} is not a known field`, field: extra } });
  const error = checkAdmission.Errors(body).First();
  if (!error) return body as { publicModelId: string; input: string };
  const field = error.path.replace(/^\//, '') || 'body';
  throw new AppError('invalid_request_body', { params: { detail: `${field}: ${error.message}`, field } });
}

export function admissionRoutes(ctx: EdgeContext, admission: AdmissionService, calls: SyncCalls) {
  return [
    implement('E01', {
      answers: {
        202: { description: 'SPEC admission body: the run is reserved (Idempotent-Replayed: true on a replay)', schema: Admission },
        200: { description: 'OpenAI Responses body: the response, or server-sent events when streamed', schema: OpenAIResponse, stream: true },
      },
      errors: edgeErrors.admission,
      noStore: true,
      bodyLimit: ctx?.config.edge.runs.maxRequestBytes,
      metering: "admission: reservation of the public model's reserve amount; OpenAI body: the relay's cost",
      // After the key check, before the body is read: a disabled edge answers the same to every request,
      // and malformed headers are reported before body faults.
      gate: async (req) => {
        if (ctx.config.edge.admissionMode !== 'controlled') throw new AppError('admission_disabled');
        if (req.headers['idempotency-key'] !== undefined) idempotencyKeyOf(req);
        parseTraceparent(req.headers.traceparent);
      },
      handler: async (req, reply) => {
        if (isOpenAiResponses(req.body)) return answerCall(ctx, calls, { format: 'responses' }, req, reply);
        let admitted: Awaited<ReturnType<AdmissionService['admit']>>;
        try {
          const idempotencyKey = idempotencyKeyOf(req);
          const traceparent = parseTraceparent(req.headers.traceparent);
          const body = admissionBodyOf(req.body);
          admitted = await admission.admit({
            apiVersion: 'v1',
            identity: identityOf(req),
            requestId: req.id,
            idempotencyKey,
            traceparent,
            body: { publicModelId: body.publicModelId, input: body.input },
          });
        } catch (e) {
          ctx.metrics.admissionRefused(e);
          throw e;
        }
        const { admission: answer, replayed } = admitted;
        ctx.metrics.admitted(replayed ? 'replayed' : 'admitted');
        if (replayed) reply.header('Idempotent-Replayed', 'true');
        reply.status(202);
        return answer;
      },
    }),
  ];
}
