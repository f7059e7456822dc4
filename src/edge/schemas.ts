import { Type } from '@sinclair/typebox';
import { EDGE_CALL_ERRORS as CALL } from '../contract/errors/edge.js';

/**
 * What the edge's own answers hold (E01's admission, E02/E03's run), and the catalog codes its operations
 * throw; the OpenAI-compatible bodies are in src/contract/wire-schemas.ts. Documentation and the OpenAPI
 * check only.
 */

const Str = Type.String();
const Num = Type.Number();
const NullStr = Type.Union([Str, Type.Null()]);

/** E01 with SPEC's admission body: the reservation (202; Idempotent-Replayed: true on a replay). */
export const Admission = Type.Object({ requestId: Str, runId: Str, status: Type.Literal('reserved'), createdAt: Str }, { $id: 'Admission' });

/** An admitted run as its owner sees it (runs/routes.ts runView). */
export const RunView = Type.Object(
  {
    requestId: Str,
    runId: Str,
    status: Type.Union(['reserved', 'running', 'succeeded', 'failed', 'cancelled'].map((s) => Type.Literal(s))),
    publicModelId: Str,
    output: NullStr,
    usage: Type.Object({ promptTokens: Num, completionTokens: Num }),
    reservedAmount: Num,
    cost: Num,
    error: Type.Union([Type.Object({ code: Str, message: NullStr }), Type.Null()]),
    createdAt: NullStr,
    startedAt: NullStr,
    finishedAt: NullStr,
  },
  { $id: 'Run' },
);

/** A token count: the call's checks of the model, none of the wallet's. */
const COUNT = ['admission_disabled', 'invalid_request_body', 'model_not_found', 'model_disabled', 'model_not_allowed', 'service_unavailable', 'relay_invalid_request', 'relay_request_too_deep', 'relay_internal_error'];

export const edgeErrors = {
  admission: ['idempotency_key_required', 'invalid_idempotency_key', 'idempotency_key_conflict', 'invalid_traceparent', ...CALL],
  runs: ['run_not_found', 'run_not_cancellable'],
  call: CALL,
  count: COUNT,
  /** Gemini's path serves calls and counts. */
  gemini: [...CALL, ...COUNT.filter((c) => !CALL.includes(c))],
  models: ['admission_disabled'],
  model: ['admission_disabled', 'model_not_found'],
};
