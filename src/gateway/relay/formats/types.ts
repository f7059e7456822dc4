import type { TSchema } from '@sinclair/typebox';
import type { RelayCall, RelayFormat } from '../../../contract/relay.js';
import type { ChatBody, ChatCompletion, ChatUsage, Json } from '../../providers/pivot.js';
import type { ProviderRelay, UpstreamCall } from '../../providers/types.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import type { UsageCheck } from '../usage.js';
import type { UsageShown } from './shown-usage.js';
import type { ChunkEncoder, StreamReader } from './stream-reader.js';

/**
 * A caller format: what a caller sends and is answered in (OpenAI Chat Completions, Responses and
 * embeddings, Anthropic Messages, Gemini generateContent). The relay reads every call through its format:
 * it parses the call, turns it into the internal form (a chat request, see providers/pivot.ts) and the
 * upstream's answer back, whole or streamed, answers errors in the format's shape, and passes the call
 * through unconverted to a provider that speaks the format itself (ProviderRelay.native). The registry is
 * index.ts; a new format is one more module there.
 */
export interface CallerFormat {
  readonly name: RelayFormat;

  // ---- parse

  /** The fields of the caller's body the relay reads (its route's schema); every other field passes through. */
  readonly body: TSchema;
  /** The model the call names and whether it asks for a stream, as sent (the plan checks the model). */
  target(call: Pick<RelayCall, 'body' | 'modelInPath'>): { model: unknown; stream: boolean };
  /** What the body lacks that the format needs (the refusal's detail), else null. */
  missing?(body: Json): string | null;
  /** The path of the call at the caller's vendor (what channel-affinity rules match). */
  vendorPath(model: string, stream: boolean): string;
  /**
   * The body as the format's vendor takes it, from what its clients send beyond that (Claude Code's
   * `role: "system"` messages, folded into `system`). Absent: the body as sent.
   */
  canonical?(body: Json): Json;

  // ---- to and from the internal form

  /**
   * The call as a chat request; throws RelayInputError for what chat cannot carry. Done before any channel
   * is tried, so such a call is refused up front. Absent: the body is a chat request already.
   */
  toChat?(body: Json, model: string, stream: boolean): ChatBody;
  /**
   * The upstream request for a provider that does not speak the format. Absent: the chat request
   * (toChat) in the provider's own wire format.
   */
  toProvider?(p: ProviderRelay, t: UpstreamTarget, body: Json, model: string): UpstreamCall;
  /** The prompt's tokens as the tokenizer counts them, for bodies that are no chat request. Absent: the chat request's. */
  promptTokens?(body: Json): number;
  /** Where the caller caps the output. Absent: the answer holds no generated tokens (embeddings), or as many as it likes (`uncappedOutput`). */
  readonly output?: OutputCap;
  /** The answer holds generated tokens the caller cannot cap (an image's, a transcription's). */
  readonly uncappedOutput?: boolean;
  /**
   * How many times a per-call price is paid (images: n × the size ratio), from the request and, once it
   * came, the upstream's answer (its JSON). Absent: once.
   */
  priceUnits?(request: Json, answer?: unknown): number;
  /** A chat completion as the format's answer. Absent: the answer is the completion itself. */
  fromChat?(c: ChatCompletion, request: Json): Json;
  /** Reads an answer that is no chat completion itself (embeddings); the other formats leave it out. */
  answer?(a: AnswerInput): WholeAnswer;
  /** Writes the billed usage into a whole answer in the format (see shown-usage.ts). */
  showUsage(answer: Json, u: ChatUsage): void;
  /** Writes chat chunks as the format's stream. Absent: the format's answers are never streamed. */
  encoder?(request: Json, model: string): ChunkEncoder;

  // ---- native pass-through (a provider that speaks the format)

  /** Usage and text of such an answer; an error body throws UpstreamPayloadError. Absent: it is read as a chat completion. */
  nativeAnswer?(json: unknown): { usage: ChatUsage | null; text: string };
  /** Such a stream, passed through and watched (`request`: the caller's body). Absent: it is read as chat chunks, passed as they came. */
  nativeReader?(shown: UsageShown, request: Json): StreamReader;

  // ---- token counting

  /** The format's endpoint that counts a prompt without calling the model; absent when it has none. */
  readonly count?: TokenCounting;

  // ---- answers that are no JSON of the relay's: passed through as the upstream's bytes, its content type kept

  /**
   * `streamed`: passed as they come and billed by the request alone (speech audio); else read whole first
   * and billed by `read`'s usage of them (a transcription, as JSON, text or subtitles; an error body throws
   * UpstreamPayloadError, the usage is null when the upstream reported none and the text is counted).
   * Absent: the answer is JSON or SSE.
   */
  readonly bytes?: { streamed: true } | { streamed: false; read(text: string, contentType: string): { usage: ChatUsage | null; text: string } };

  // ---- errors

  /** The relay paths whose errors (even those answered before routing) take this format's shape. */
  readonly relayPath: RegExp;
  errorBody(e: RelayErrorView): unknown;
}

/** A format's token counting endpoint (Anthropic's count_tokens, Gemini's countTokens). */
export interface TokenCounting {
  /** The count request's body as a call of the format (what the tokenizer counts when no upstream does). */
  call(body: Json): Json;
  /** The count in an answer of the vendor's own endpoint; null when it holds none. */
  read(json: unknown): number | null;
  /** The count as the endpoint answers it. */
  answer(tokens: number): Json;
}

/** The output cap of a format's body. */
export interface OutputCap {
  /** The cap the caller set (its smallest where it set several); null when it set none. */
  max(body: Json): number | null;
  /** The body with its output capped at `n` tokens: every cap field the caller used, or the format's own. */
  withMax(body: Json, model: string, n: number): Json;
}

/** What a format reading a whole answer itself is given (see CallerFormat.answer). */
export interface AnswerInput {
  provider: ProviderRelay;
  /** Whether the provider speaks the format (the answer may pass through). */
  native: boolean;
  upstreamModel: string;
  /** The upstream's answer. */
  json: unknown;
  /** The caller's body. */
  request: Json;
  /** The upstream's usage where it can be right, else counted (see checkedUsage). */
  usage(reported: ChatUsage | null, completionText: string): UsageCheck;
  /** The upstream's own answer text, or its JSON with the billed usage when the usage was replaced. */
  passed(usage: UsageCheck): string;
}

export interface WholeAnswer {
  body: string;
  usage: UsageCheck;
}

/** An error as a format's shape needs it. */
export interface RelayErrorView {
  status: number;
  /** The catalog code. */
  code: string;
  message: string;
  /** The catalog's OpenAI error type of the code, when it names one. */
  type?: string;
  /** The request field at fault, when known. */
  field?: string | number;
  requestId: string;
}

/** A request the relay cannot serve through chat; the relay answers it as a 400 invalid_request_error. */
export class RelayInputError extends Error {
  constructor(
    message: string,
    /** The request field at fault. */
    readonly param: string,
  ) {
    super(message);
    this.name = 'RelayInputError';
  }
}

/** A token count a caller set: a whole number above 0, else null. */
export const positiveCount = (v: unknown): number | null => (typeof v === 'number' && Number.isInteger(v) && v > 0 ? v : null);

/** A count an upstream answered: a whole number from 0, else null. */
export const positiveOrZero = (v: unknown): number | null => (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0 ? v : null);
