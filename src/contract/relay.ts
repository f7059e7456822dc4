/**
 * The relay's port: how another deployable (the edge) has model calls served by the gateway's channels. The
 * gateway implements it in-process (src/gateway/relay/engine.ts) and over its internal HTTP API (/relay/v1/…,
 * a workload token); `edge/` and `gateway/` share only these types.
 */
import type { CancelSignal } from '../kit/http/cancel-signal.js';

export type RelayFormat = 'chat' | 'responses' | 'embeddings' | 'anthropic' | 'gemini' | 'completions' | 'moderations' | 'rerank' | 'images' | 'speech' | 'transcriptions';

/** The model OpenAI moderates with when a moderations body names none (its SDK sends none unless asked). */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

/** A file of a multipart call (an audio transcription's `file`), its bytes as the caller sent them. */
export interface RelayFile {
  /** The form field it came in. */
  field: string;
  filename: string;
  /** Its media type as the caller gave it ('' when none). */
  type: string;
  bytes: Uint8Array;
}

export interface RelayCaller {
  /** The calling deployable (the workload token's `iss`). */
  issuer: string;
  /** Who it calls for (the token's `sub`: an owner, a key id), kept in the relay log. */
  subject: string;
  /** The channel group the call is routed in. */
  group: string;
}

export interface RelayCall {
  format: RelayFormat;
  /**
   * The caller's body in its format: OpenAI Chat Completions, Responses, embeddings, legacy completions,
   * moderations, image generation or speech, Anthropic Messages, Gemini generateContent or a Jina/Cohere
   * rerank; for a multipart call (an audio transcription) the form's text fields (a repeated field as a
   * list), its files in `files`.
   */
  body: Record<string, unknown>;
  /** The files of a multipart call, sent upstream unchanged. */
  files?: RelayFile[];
  /** Gemini callers name the model and whether to stream in the path (`models/{model}:streamGenerateContent`), not in the body. */
  modelInPath?: { model: string; stream: boolean };
  caller: RelayCaller;
  requestId: string;
  /** Aborts the upstream request (the caller went away). */
  signal?: CancelSignal;
  /** The caller's request headers that channel-affinity rules may read (user-agent, session ids). */
  headers?: Record<string, string>;
  /**
   * The caller's headers of its format's vendor (VENDOR_HEADERS: anthropic-version, anthropic-beta), sent on
   * to a channel that speaks the format itself; a converted call drops them.
   */
  vendorHeaders?: Record<string, string>;
  /**
   * An Anthropic caller's `?beta=true` (what Claude Code sends on /v1/messages; betaQueryOf):
   * sent on as the same query to a channel that speaks Anthropic's format itself, as new-api does; a
   * converted call drops it.
   */
  betaQuery?: boolean;
  /**
   * The most the call may cost, in quota units (what the caller holds for it): the relay caps the output
   * tokens it asks the upstream for so that the cost fits (the caller's own smaller cap is kept).
   */
  budget?: number;
}

/** The call to quote: what it asks for, not who serves it. */
export type QuotedCall = Pick<RelayCall, 'format' | 'body' | 'modelInPath' | 'caller'>;

/** The headers of a caller format's vendor that pass to a channel of that vendor (lower case), by format. */
export const VENDOR_HEADERS: Readonly<Partial<Record<RelayFormat, readonly string[]>>> = { anthropic: ['anthropic-version', 'anthropic-beta'] };

/** The vendor headers of a format among a request's headers (a value of at most 1,000 characters). */
export function vendorHeadersOf(format: RelayFormat, headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const name of VENDOR_HEADERS[format] ?? []) {
    const v = headers[name];
    if (typeof v === 'string' && v !== '' && v.length <= 1000) out[name] = v;
  }
  return out;
}

/**
 * Whether a request of the format asks Anthropic's `?beta=true`: an Anthropic caller whose URL's first `beta`
 * is exactly `true` (new-api's `c.Query("beta") == "true"`); never another format.
 */
export function betaQueryOf(format: RelayFormat, url: string): boolean {
  const q = url.indexOf('?');
  return format === 'anthropic' && q >= 0 && new URLSearchParams(url.slice(q + 1)).get('beta') === 'true';
}

/**
 * A prompt to count without calling the model (Anthropic's count_tokens body, Gemini's countTokens body),
 * never charged: the format's own body, the model as the call names it.
 */
export type CountCall = Pick<RelayCall, 'format' | 'body' | 'modelInPath' | 'caller' | 'requestId' | 'signal' | 'vendorHeaders' | 'betaQuery'>;

/** A prompt's tokens: the upstream's own count (a channel of the format's vendor), else the relay tokenizer's estimate. */
export interface RelayTokenCount {
  tokens: number;
  source: 'upstream' | 'tokenizer';
}

/** What a call can cost, in quota units, before it is relayed (its prompt counted with the relay's tokenizer). */
export interface RelayQuote {
  /** The prompt and one output token (the per-call price, the embeddings' input): less cannot be served. */
  minimum: number;
  /** With the caller's own output cap; null when it set none (the budget then decides how long the answer may be). */
  estimate: number | null;
}

/** A gateway model's price as the relay charges it (new-api's pricing fields; the group ratio multiplies either). */
export interface RelayModelPrice {
  /** 0: by tokens (model_ratio quota per prompt token, completion_ratio times that per output token); 1: per call. */
  quota_type: 0 | 1;
  model_ratio: number;
  /** USD per call when quota_type is 1, else 0. */
  model_price: number;
  completion_ratio: number;
}

/** The prices of the models asked for (null: the relay has no price for it) and every channel group's ratio. */
export interface RelayPrices {
  models: Record<string, RelayModelPrice | null>;
  group_ratio: Record<string, number>;
}

export interface RelayUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens: number;
  reasoning_tokens: number;
  total_tokens: number;
  /** Whether the numbers came from the upstream or were counted with the tokenizer. */
  counted: boolean;
}

/** One channel tried for a call, in order. */
export interface RelayAttempt {
  channel_id: number;
  key_index: number | null;
  /** The upstream's HTTP status, or 0 when none came (connection failure, timeout). */
  status: number;
  /** null for the attempt that served the call. */
  error_code: string | null;
  ms: number;
}

/** What a call cost and how it went; final once the answer (or stream) has ended. */
export interface RelaySummary {
  request_id: string;
  model: string;
  upstream_model: string;
  channel_id: number | null;
  key_index: number | null;
  /** The status the caller got; 499 when the caller went away during a stream. */
  status: number;
  error_code: string | null;
  usage: RelayUsage;
  /** The gateway's quota units (500,000 per USD, as the reference) and the same in USD. */
  quota: number;
  cost_usd: number;
  first_byte_ms: number | null;
  total_ms: number;
  attempts: RelayAttempt[];
}

export type RelayAnswer =
  | { kind: 'json'; status: number; body: string; summary: RelaySummary }
  | {
      kind: 'stream';
      status: 200;
      contentType: string;
      /** The caller-format stream text, piece by piece; pulled at the caller's pace. */
      pieces: AsyncIterable<string>;
      /**
       * Settles when the stream has ended (or was abandoned), before its last piece (the closing event) is
       * handed out: a consumer may hold that piece until the call is charged.
       */
      summary: Promise<RelaySummary>;
    }
  | {
      /** An answer that is no JSON of the relay's (audio, a transcription as text or subtitles), passed through. */
      kind: 'bytes';
      status: 200;
      /** The upstream's media type, as it sent it. */
      contentType: string;
      /** The upstream's bytes, unchanged; pulled at the caller's pace. An error ends them early (the answer is cut). */
      chunks: AsyncIterable<Uint8Array>;
      /** Settles when the last byte was pulled (or the answer was abandoned). */
      summary: Promise<RelaySummary>;
    };

export interface RelayPort {
  /**
   * Serves one call. A refusal or a failure before any output throws an AppError whose code is one of the
   * catalog's relay_* codes, with `options.data` = {status, summary} (the status to answer with).
   */
  relay(call: RelayCall): Promise<RelayAnswer>;
  /** Prices a call before it is made (refusals as relay()'s before any channel is tried: invalid, unpriced). */
  quote(call: QuotedCall): Promise<RelayQuote>;
  /**
   * The logged summary of a call this caller made, by its request id; null when there is none (never
   * relayed, or not yet written: the log is written within a second of the call's end).
   */
  summaryOf(requestId: string, caller: Pick<RelayCaller, 'issuer' | 'subject'>): Promise<RelaySummary | null>;
  /** What these gateway models cost, from the relay's ratio configuration (what a customer's price list shows). */
  prices(models: string[]): Promise<RelayPrices>;
  /** Counts a prompt of the Anthropic or Gemini format (refusals as quote()'s); nothing is charged or logged. */
  countTokens(call: CountCall): Promise<RelayTokenCount>;
}

/**
 * Over HTTP: a whole answer's summary header (base64url JSON; the trailer of the same name after a bytes
 * answer's last byte), and the SSE comment that ends a stream.
 */
export const RELAY_SUMMARY_HEADER = 'x-relay-summary';
export const RELAY_SUMMARY_COMMENT = ': relay-summary ';
/** Over HTTP: a call's budget (RelayCall.budget). */
export const RELAY_BUDGET_HEADER = 'x-relay-budget';
/** Over HTTP: where a token count came from (RelayTokenCount.source). */
export const RELAY_COUNT_SOURCE_HEADER = 'x-relay-count-source';

/** What a Gemini call asks for in its path: `models/{model}:{action}`. */
export type GeminiAction = 'generateContent' | 'streamGenerateContent' | 'countTokens';
const GEMINI_TARGET = /^(.+):(generateContent|streamGenerateContent|countTokens)$/s;

/**
 * A Gemini path's `{model}:{action}` (the model is everything before the last colon: Ollama names hold
 * colons), or why it is none. A stream is served as server-sent events only (`alt=sse`, what Google's SDKs
 * ask for; without it Google streams one JSON array).
 */
export function parseGeminiTarget(target: string, alt: string | undefined): { model: string; action: GeminiAction; stream: boolean } | string {
  const m = GEMINI_TARGET.exec(target);
  if (!m) return 'the path must be models/{model}:generateContent, :streamGenerateContent or :countTokens';
  const action = m[2] as GeminiAction;
  const stream = action === 'streamGenerateContent';
  if (stream && alt !== 'sse') return 'streamGenerateContent is served as server-sent events only: add ?alt=sse';
  return { model: m[1]!, action, stream };
}
