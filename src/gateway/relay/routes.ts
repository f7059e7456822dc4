import type { ServerResponse } from 'node:http';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { betaQueryOf, parseGeminiTarget, RELAY_BUDGET_HEADER, RELAY_COUNT_SOURCE_HEADER, RELAY_SUMMARY_COMMENT, RELAY_SUMMARY_HEADER, vendorHeadersOf, type RelayCall, type RelayCaller, type RelayFormat, type RelaySummary } from '../../contract/relay.js';
import { implement, type OperationImpl } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { AppError } from '../../kit/http/errors.js';
import { splitForm } from '../../kit/http/multipart.js';
import { clientGone, closedEarly, writePiecesTo } from '../../kit/http/stream.js';
import type { LaneRequest } from '../../kit/http/fast-lane.js';
import type { GatewayContext } from '../context.js';
import type { RelayEngine } from './engine.js';
import { listLog, usageBuckets, type LogFilter } from './log-store.js';
import { AnthropicMessage, AnthropicTokenCount, ChatCompletion, EmbeddingList, GeminiResponse, GeminiTokenCount, ImagesResponse, ModerationResult, OpenAIResponse, RelaySummary as RelaySummarySchema, RerankResult, TextCompletion, Transcription } from '../../contract/wire-schemas.js';
import { RelayLogEntry, RelayUsage, relayErrors } from '../schemas.js';
import { FORMATS } from './formats/index.js';
import { MODEL } from './formats/schema.js';

/** What a relay route reads of a request: a Fastify request's fields, or a fast-lane request's (kit/http/fast-lane.ts). */
type RelayHttpRequest = Pick<LaneRequest, 'id' | 'url' | 'headers' | 'body'> & { relayCaller?: RelayCaller };

/** Request headers that channel-affinity rules may read; never the authorization header. */
function affinityHeaders(req: RelayHttpRequest): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k in req.headers) {
    const v = req.headers[k];
    if (typeof v === 'string' && k !== 'authorization' && k !== 'cookie') out[k] = v;
  }
  return out;
}

export function encodeSummary(s: RelaySummary): string {
  return Buffer.from(JSON.stringify(s)).toString('base64url');
}

/**
 * Serves one call over HTTP, on the response itself (`own` first takes it over from Fastify on its route). A
 * whole answer carries its summary in `x-relay-summary` (base64url JSON); a stream is written at the caller's
 * pace (never buffered whole) and ends with the SSE comment `: relay-summary {json}`, which SSE clients ignore.
 * The caller going away aborts the upstream request.
 */
async function serve(engine: RelayEngine, format: RelayFormat, req: RelayHttpRequest, res: ServerResponse, own?: () => void, modelInPath?: RelayCall['modelInPath']) {
  const gone = closedEarly(res);
  const budget = budgetOf(req.headers[RELAY_BUDGET_HEADER]);
  const { body, files } = callBody(format, req.body as Record<string, unknown>);
  const answer = await engine.relay({ format, body, ...(files ? { files } : {}), modelInPath, caller: req.relayCaller!, requestId: req.id, signal: gone, headers: affinityHeaders(req), vendorHeaders: vendorHeadersOf(format, req.headers), betaQuery: betaQueryOf(format, req.url), ...(budget !== undefined ? { budget } : {}) });
  own?.();
  if (answer.kind === 'json') {
    res.writeHead(answer.status, { 'x-request-id': req.id, 'content-type': 'application/json; charset=utf-8', [RELAY_SUMMARY_HEADER]: encodeSummary(answer.summary), 'content-length': Buffer.byteLength(answer.body) });
    res.end(answer.body);
    return;
  }
  if (answer.kind === 'bytes') {
    // The summary follows the last byte as an HTTP trailer; a cut answer ends without it (the caller asks GR04).
    try {
      if (!(await writePiecesTo(res, { contentType: answer.contentType, headers: { 'x-request-id': req.id, trailer: RELAY_SUMMARY_HEADER } }, answer.chunks, gone))) return;
    } catch {
      res.destroy();
      return;
    }
    res.addTrailers({ [RELAY_SUMMARY_HEADER]: encodeSummary(await answer.summary) });
    res.end();
    return;
  }
  const complete = await writePiecesTo(res, { contentType: answer.contentType, headers: { 'x-request-id': req.id } }, answer.pieces, gone);
  if (complete) res.end(`${RELAY_SUMMARY_COMMENT}${JSON.stringify(await answer.summary)}\n\n`);
}

/** A relay format's call on its Fastify route and on the fast lane. */
function served(engine: RelayEngine, format: RelayFormat) {
  return {
    handler: (req: FastifyRequest, reply: FastifyReply) => serve(engine, format, req, reply.raw, () => reply.hijack()),
    lane: (req: LaneRequest, res: ServerResponse) => serve(engine, format, req, res),
  };
}

/** Counts a prompt of the format (GR09, GR06's :countTokens), answered as the format's count endpoint answers, its source in a header. */
async function count(engine: RelayEngine, format: 'anthropic' | 'gemini', req: FastifyRequest, reply: FastifyReply, modelInPath?: RelayCall['modelInPath']) {
  const counted = await engine.countTokens({ format, body: req.body as Record<string, unknown>, modelInPath, caller: req.relayCaller!, requestId: req.id, signal: clientGone(reply), vendorHeaders: vendorHeadersOf(format, req.headers), betaQuery: betaQueryOf(format, req.url) });
  return reply.header(RELAY_COUNT_SOURCE_HEADER, counted.source).send(FORMATS[format].count!.answer(counted.tokens));
}

/** The relay call's body of a route's: a multipart body (GR16's form) as its text fields and its files, which must hold `file`. */
function callBody(format: RelayFormat, body: Record<string, unknown>): Pick<RelayCall, 'body' | 'files'> {
  if (format !== 'transcriptions') return { body };
  const { fields, files } = splitForm(body);
  if (!files.some((f) => f.field === 'file')) throw new AppError('relay_invalid_request', { params: { detail: 'file must be an uploaded file (multipart/form-data)', field: 'file' } });
  return { body: fields, files };
}

/** A call's budget header: a non-negative integer of quota units, else none. */
function budgetOf(header: unknown): number | undefined {
  const n = typeof header === 'string' && /^\d{1,15}$/.test(header) ? Number(header) : NaN;
  return Number.isSafeInteger(n) ? n : undefined;
}

const MS = Type.Integer({ minimum: 0, maximum: 8_640_000_000_000 });

const logQuery = Type.Object({
  p: Type.Optional(Type.Integer({ minimum: 1, maximum: 100_000 })),
  page_size: Type.Optional(Type.Integer({ minimum: 1, maximum: 200 })),
  model: Type.Optional(Type.String({ maxLength: 255 })),
  channel_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
  status: Type.Optional(Type.String({ pattern: '^(success|error|[1-5][0-9][0-9])$' })),
  caller: Type.Optional(Type.String({ maxLength: 192 })),
  start_time: Type.Optional(MS),
  end_time: Type.Optional(MS),
});

function filterOf(q: { model?: string; channel_id?: number; status?: string; caller?: string; start_time?: number; end_time?: number }): LogFilter {
  return { model: q.model || undefined, channel_id: q.channel_id, status: q.status, caller: q.caller || undefined, from: q.start_time, to: q.end_time };
}

const RATIO = Type.Number({ minimum: 0 });
const RelayPricesSchema = Type.Object({
  models: Type.Record(
    Type.String(),
    Type.Union([Type.Object({ quota_type: Type.Union([Type.Literal(0), Type.Literal(1)]), model_ratio: RATIO, model_price: RATIO, completion_ratio: RATIO }), Type.Null()]),
  ),
  group_ratio: Type.Record(Type.String(), RATIO),
});

/** The upstream's answer in the caller's format (summary in x-relay-summary), or its stream (summary in the closing comment). */
const ANSWERS = {
  chat: { 200: { description: 'The chat completion; server-sent events when streamed', schema: ChatCompletion, stream: true } },
  responses: { 200: { description: 'The response; server-sent events when streamed', schema: OpenAIResponse, stream: true } },
  embeddings: { 200: { description: 'The embeddings', schema: EmbeddingList } },
  anthropic: { 200: { description: 'The message; server-sent events when streamed', schema: AnthropicMessage, stream: true } },
  gemini: { 200: { description: 'The generateContent answer; server-sent events for streamGenerateContent?alt=sse; {totalTokens} for countTokens', schema: Type.Union([GeminiResponse, GeminiTokenCount]), stream: true } },
  completions: { 200: { description: 'The text completion; server-sent events when streamed', schema: TextCompletion, stream: true } },
  moderations: { 200: { description: "The upstream's moderation answer, unchanged", schema: ModerationResult } },
  rerank: { 200: { description: "The ranked documents in Jina's shape", schema: RerankResult } },
  anthropicCount: { 200: { description: "The prompt's tokens (x-relay-count-source: upstream or tokenizer)", schema: AnthropicTokenCount } },
  images: { 200: { description: 'The images, as the upstream answered', schema: ImagesResponse } },
  speech: { 200: { description: "The audio, in the upstream's bytes and content type (summary in the x-relay-summary trailer)", media: ['audio/*'] } },
  transcriptions: { 200: { description: "The transcription as the upstream answered it: JSON, or text, srt or vtt (summary in the x-relay-summary trailer)", schema: Transcription, media: ['text/plain', 'text/vtt'] } },
};

/** GR06's target `{model}:{action}`, the stream asked for with alt=sse (relay_invalid_request otherwise). */
function geminiTarget(req: FastifyRequest<{ Params: { target: string }; Querystring: { alt?: string } }>) {
  const target = parseGeminiTarget(req.params.target, req.query.alt);
  if (typeof target === 'string') throw new AppError('relay_invalid_request', { params: { detail: target, field: 'target' } });
  return target;
}

/**
 * The relay's internal API (GR01–GR08, GR11–GR16, workload token) and its log for staff (GS04, GS05). `callerNames`:
 * the names of callers it knows (edge owners when the edge runs in this process).
 */
export function relayRoutes(ctx: GatewayContext, engine: RelayEngine, callerNames: (callers: string[]) => Promise<Map<string, string>> = async () => new Map()): OperationImpl<any>[] {
  const bodyLimit = ctx?.config.gateway.relay.maxRequestBytes;
  return [
    implement('GR01', { answers: ANSWERS.chat, errors: relayErrors, bodyLimit, schema: { body: FORMATS.chat.body }, ...served(engine, 'chat') }),
    implement('GR02', { answers: ANSWERS.responses, errors: relayErrors, bodyLimit, schema: { body: FORMATS.responses.body }, ...served(engine, 'responses') }),
    implement('GR03', { answers: ANSWERS.embeddings, errors: relayErrors, bodyLimit, schema: { body: FORMATS.embeddings.body }, ...served(engine, 'embeddings') }),
    implement('GR05', { answers: ANSWERS.anthropic, errors: relayErrors, bodyLimit, schema: { body: FORMATS.anthropic.body }, ...served(engine, 'anthropic') }),
    implement('GR06', {
      answers: ANSWERS.gemini,
      errors: relayErrors,
      bodyLimit,
      schema: { params: Type.Object({ target: Type.String({ minLength: 1, maxLength: 300 }) }), querystring: Type.Object({ alt: Type.Optional(Type.String({ maxLength: 16 })) }), body: FORMATS.gemini.body },
      handler: (req, reply) => {
        const { action, model, stream } = geminiTarget(req);
        return action === 'countTokens' ? count(engine, 'gemini', req, reply, { model, stream: false }) : serve(engine, 'gemini', req, reply.raw, () => reply.hijack(), { model, stream });
      },
    }),
    implement('GR11', { answers: ANSWERS.completions, errors: relayErrors, bodyLimit, schema: { body: FORMATS.completions.body }, ...served(engine, 'completions') }),
    implement('GR12', { answers: ANSWERS.moderations, errors: relayErrors, bodyLimit, schema: { body: FORMATS.moderations.body }, ...served(engine, 'moderations') }),
    implement('GR13', { answers: ANSWERS.rerank, errors: relayErrors, bodyLimit, schema: { body: FORMATS.rerank.body }, ...served(engine, 'rerank') }),
    implement('GR14', { answers: ANSWERS.images, errors: relayErrors, bodyLimit, schema: { body: FORMATS.images.body }, ...served(engine, 'images') }),
    implement('GR15', { answers: ANSWERS.speech, errors: relayErrors, bodyLimit, schema: { body: FORMATS.speech.body }, ...served(engine, 'speech') }),
    implement('GR16', { answers: ANSWERS.transcriptions, errors: relayErrors, bodyLimit: ctx?.config.gateway.relay.maxUploadBytes, multipart: true, schema: { body: FORMATS.transcriptions.body }, handler: (req, reply) => serve(engine, 'transcriptions', req, reply.raw, () => reply.hijack()) }),
    implement('GR09', { answers: ANSWERS.anthropicCount, errors: relayErrors, bodyLimit, schema: { body: FORMATS.anthropic.body }, handler: (req, reply) => count(engine, 'anthropic', req, reply) }),
    implement('GR07', {
      answers: { 200: { description: 'The quote, in quota units', schema: Type.Object({ minimum: Type.Integer(), estimate: Type.Union([Type.Integer(), Type.Null()]) }) } },
      errors: relayErrors,
      bodyLimit,
      schema: {
        body: Type.Object({
          format: Type.Union((Object.keys(FORMATS) as (keyof typeof FORMATS)[]).map((f) => Type.Literal(f))),
          body: Type.Object({}, { additionalProperties: true }),
          model_in_path: Type.Optional(Type.Object({ model: MODEL, stream: Type.Boolean() })),
        }),
      },
      handler: async (req) => engine.quote({ format: req.body.format, body: req.body.body, modelInPath: req.body.model_in_path, caller: req.relayCaller! }),
    }),
    implement('GR08', {
      answers: { 200: { description: 'The prices (null: the model has no price) and the group ratios', schema: RelayPricesSchema } },
      errors: relayErrors,
      schema: { body: Type.Object({ models: Type.Array(MODEL, { maxItems: 5000 }) }) },
      handler: async (req) => engine.prices(req.body.models),
    }),
    implement('GR04', {
      answers: { 200: { description: 'The call summary', schema: RelaySummarySchema } },
      errors: ['relay_call_not_found'],
      schema: { params: Type.Object({ request_id: Type.String({ minLength: 1, maxLength: 64, pattern: '^[A-Za-z0-9._-]+$' }) }) },
      handler: async (req) => {
        const summary = await engine.summaryOf(req.params.request_id, req.relayCaller!);
        if (!summary) throw new AppError('relay_call_not_found');
        return summary;
      },
    }),
    implement('GS04', {
      data: Type.Object({ items: Type.Array(RelayLogEntry), total: Type.Integer(), page: Type.Integer(), page_size: Type.Integer() }),
      schema: { querystring: logQuery },
      handler: async (req) => {
        const q = req.query;
        const page = q.p ?? 1;
        const pageSize = q.page_size ?? 20;
        const { rows, total } = await listLog(ctx.db, filterOf(q), pageSize, (page - 1) * pageSize);
        const names = await callerNames(rows.map((r) => r.caller));
        const items = rows.map((r) => ({ ...r, id: Number(r.id), caller_name: names.get(r.caller) ?? null, channel_id: r.channel_id === null ? null : Number(r.channel_id), attempts: JSON.parse(r.attempts), usage_counted: Number(r.usage_counted) }));
        return ok({ items, total, page, page_size: pageSize });
      },
    }),
    implement('GS05', {
      data: RelayUsage,
      schema: {
        querystring: Type.Object({
          start_time: MS,
          end_time: Type.Optional(MS),
          bucket_seconds: Type.Optional(Type.Integer({ minimum: 60, maximum: 86400 * 31 })),
          by: Type.Optional(Type.Union([Type.Literal('model'), Type.Literal('channel'), Type.Literal('caller')])),
          model: Type.Optional(Type.String({ maxLength: 255 })),
          channel_id: Type.Optional(Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER })),
        }),
      },
      handler: async (req) => {
        const q = req.query;
        const bucketSeconds = q.bucket_seconds ?? 3600;
        const buckets = await usageBuckets(ctx.db, filterOf(q), bucketSeconds * 1000, q.by === 'channel' ? 'channel_id' : q.by === 'caller' ? 'caller' : 'model');
        const names = q.by === 'caller' ? await callerNames([...new Set(buckets.map((b) => b.key))]) : new Map<string, string>();
        return ok({ bucket_seconds: bucketSeconds, by: q.by ?? 'model', buckets, caller_names: Object.fromEntries(names) });
      },
    }),
  ];
}
