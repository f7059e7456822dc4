import type { RelayCall, RelayFile, RelayFormat } from '../../contract/relay.js';
import type { UpstreamClient } from '../../kit/upstream/client.js';
import type { ProbeOutcome } from '../upstream/probe.js';
import type { UpstreamTarget } from '../upstream/target.js';
import type { ChatBody, ChatChunk, ChatCompletion, ChatUsage, EmbeddingsBody, EmbeddingsResult, Json } from './pivot.js';

/**
 * A provider is one upstream family (OpenAI-compatible, Azure OpenAI, Anthropic, Gemini, Ollama, Codex):
 * the channel types it serves and everything the gateway sends them, its paths, auth headers and answer
 * shapes, on the control plane (model lists, channel tests, balances) and on the data plane (the relay's
 * calls, converted from and to the internal form in pivot.ts). The gateway's services never build
 * upstream requests themselves; they find the provider of a channel type in the registry (index.ts).
 */
export interface Provider {
  /** The provider's name (the `family` label of the gateway's metrics). */
  readonly name: string;
  /** The channel types of this provider. */
  readonly channelTypes: readonly number[];
  /** The model ids the upstream offers, de-duplicated, in the upstream's order. */
  listModels(ctx: ProviderContext, t: UpstreamTarget): Promise<string[]>;
  /** Endpoint types this provider can test; the first is its default. */
  readonly endpoints: readonly EndpointType[];
  /** One minimal request ("hi", 16 tokens) to `model` on `endpoint`, streamed or not. */
  test(ctx: ProviderContext, t: UpstreamTarget, r: TestRequest): Promise<ProbeOutcome>;
  /** How the balance of a channel is read, by channel type, where the vendor has a balance API. */
  readonly balances?: Readonly<Record<number, BalanceReader>>;
  /** The relay's calls to this provider; absent when the relay sends it none (its channels are skipped). */
  readonly relay?: ProviderRelay;
}

/** A provider the relay sends calls to. */
export type RelayProvider = Provider & { readonly relay: ProviderRelay };

/** What a provider may use: the gateway's upstream client (address policy, deadlines, body caps). */
export interface ProviderContext {
  upstream: UpstreamClient;
}

/** The reference's endpoint types for a channel test (those this product can send). */
export const ENDPOINT_TYPES = ['openai', 'openai-response', 'embeddings', 'anthropic', 'gemini'] as const;
export type EndpointType = (typeof ENDPOINT_TYPES)[number];

export interface TestRequest {
  /** The model name sent upstream (after the channel's model mapping). */
  model: string;
  endpoint: EndpointType;
  stream: boolean;
  timeoutMs: number;
}

/** What a vendor reports: the amount and its currency (stored as the vendor gives it). */
export interface Balance {
  balance: number;
  currency: string;
}

export interface BalanceReader {
  /** Where the vendor lives when the channel has no base URL and its type no default. */
  host?: string;
  read(ctx: ProviderContext, t: UpstreamTarget, base: string): Promise<Balance>;
}

/**
 * A provider on the relay's data plane. `model` arguments are the name sent upstream (after the channel's
 * model mapping); chunks and completions carry that model name.
 */
export interface ProviderRelay {
  chat(t: UpstreamTarget, body: ChatBody, stream: boolean): UpstreamCall;
  /** The non-streamed answer as a chat completion; throws UpstreamPayloadError when the body is an error. */
  chatResult(json: unknown, model: string): ChatCompletion;
  chatStream(model: string): StreamDecoder;
  /** Families without an embeddings API leave these out (the relay answers 400 for them). */
  embeddings?(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall;
  embeddingsResult?(json: unknown, model: string): EmbeddingsResult;
  /**
   * The caller formats this provider speaks itself, each with the request that sends a caller's body as it
   * came (but for the mapped model): such calls are not converted, their answers pass through.
   */
  readonly native: Readonly<Partial<Record<RelayFormat, NativeCall>>>;
  /** The caller formats whose token counting endpoint this provider has: the request counting a caller's count body as it came. */
  readonly countTokens?: Readonly<Partial<Record<RelayFormat, NativeCountCall>>>;
}

/** What a caller sent for its format's vendor alone, sent on to a channel of that vendor: its headers, (Anthropic's) `?beta=true`. */
export type VendorPassed = Pick<RelayCall, 'vendorHeaders' | 'betaQuery'>;

/**
 * The upstream request for a caller's own body, `model` the name sent upstream; `vendor` what the caller
 * sent for the format's vendor (RelayCall.vendorHeaders, betaQuery), sent on; `files` a multipart call's.
 */
export type NativeCall = (t: UpstreamTarget, body: Json, model: string, stream: boolean, vendor?: VendorPassed, files?: readonly RelayFile[]) => UpstreamCall;

/** The upstream request counting the tokens of a caller's count body (as NativeCall, never streamed). */
export type NativeCountCall = (t: UpstreamTarget, body: Json, model: string, vendor?: VendorPassed) => UpstreamCall;

/** The HTTP request a provider builds; the relay adds the target's proxy and header overrides. */
export interface UpstreamCall {
  url: string;
  headers: Record<string, string>;
  /** A JSON value, or a form (kit/http/multipart.ts's formDataOf) sent as multipart/form-data. */
  body: unknown;
}

/** Reads an upstream stream line by line (SSE `event:`/`data:` lines and blank lines, or NDJSON) into chat chunks. */
export interface StreamDecoder {
  /** Chunks produced by one line (often none: `event:` lines, keep-alives, blank lines). Throws UpstreamPayloadError on an error event. */
  line(line: string): ChatChunk[];
  /** Chunks still held when the stream ended (a final usage chunk, say). */
  end(): ChatChunk[];
  /**
   * The usage the upstream reported so far, for a stream cut before its end (Anthropic's message_start
   * names the prompt's tokens first); absent when the upstream reports usage only at the end.
   */
  reported?(): ChatUsage | null;
}

/**
 * An upstream answer that is an error although its HTTP status said success (an `error` object in a 200
 * body or in a stream event). The relay treats it like a 5xx: retried before any output was sent.
 */
export class UpstreamPayloadError extends Error {
  constructor(
    message: string,
    readonly upstreamCode: string | null = null,
    /** An HTTP-like status the payload names (Anthropic `overloaded_error` → 529, Gemini `code`), else 502. */
    readonly status = 502,
  ) {
    super(message);
    this.name = 'UpstreamPayloadError';
  }
}

/** A request this channel's wire format cannot carry (another channel of the model may): never the channel's failure. */
export class UnsupportedByChannel extends Error {
  constructor(
    message: string,
    /** What the caller is told (no channel's name or type). */
    readonly callerDetail = message,
    /** The catalog code the caller gets when no channel of the model serves the call. */
    readonly code: 'relay_invalid_request' | 'relay_unsupported_endpoint' = 'relay_invalid_request',
  ) {
    super(message);
    this.name = 'UnsupportedByChannel';
  }
}

/** Trimmed, non-empty, first occurrence kept. */
export function uniqueIds(ids: unknown[]): string[] {
  return [...new Set(ids.filter((x): x is string => typeof x === 'string').map((x) => x.trim()).filter(Boolean))];
}

/** The `data[].id` list of an OpenAI-style model list. */
export function dataIds(body: unknown): unknown[] | null {
  const data = (body as { data?: unknown })?.data;
  return Array.isArray(data) ? data.map((m) => (m as { id?: unknown })?.id) : null;
}
