import { Type } from '@sinclair/typebox';

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

/** A call through the gateway relay: reserved in the owner's wallet, the relay's failures passed on. */
const CALL = [
  'admission_disabled',
  'invalid_request_body',
  'model_not_found',
  'model_disabled',
  'insufficient_balance',
  'model_not_allowed',
  'token_quota_exhausted',
  'concurrency_limited',
  'service_unavailable',
  'relay_invalid_request',
  'relay_no_channel',
  'relay_model_unpriced',
  'relay_upstream_error',
  'relay_upstream_timeout',
  'relay_upstream_unreachable',
  'relay_upstream_bad_response',
  'relay_stream_interrupted',
  'relay_busy',
  'relay_request_too_deep',
  'relay_internal_error',
];

export const edgeErrors = {
  admission: ['idempotency_key_required', 'invalid_idempotency_key', 'idempotency_key_conflict', 'invalid_traceparent', ...CALL],
  runs: ['run_not_found', 'run_not_cancellable'],
  call: CALL,
  models: ['admission_disabled'],
};
