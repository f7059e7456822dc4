import type { RelayCall } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import { jsonObject } from '../../kit/json/object.js';
import { FormData } from '../../kit/http/multipart.js';
import type { ChatBody, ChatUsage, Json } from '../providers/pivot.js';
import type { ProviderRelay, UpstreamCall } from '../providers/types.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { formatOf } from './formats/index.js';
import { billedUsage, type UsageShown } from './formats/shown-usage.js';
import { pivotReader, type StreamReader } from './formats/stream-reader.js';
import { RelayInputError, type CallerFormat } from './formats/types.js';
import { promptTokens, textTokens } from './tokens.js';
import { checkedUsage, usageBounds, type UsageBounds, type UsageCheck } from './usage.js';

/**
 * Prompt counts by the request body counted: the edge quotes a call (its hold) and then relays the same body,
 * so the tokenizer, the dearest step of a long prompt, runs once per call instead of twice.
 */
const promptCounts = new WeakMap<object, { format: string; tokens: number }>();

function invalid(detail: string): never {
  throw new AppError('relay_invalid_request', { params: { detail } });
}

/** What one call asks for, checked once, and how it is sent to each channel tried. */
export class Plan {
  readonly format: CallerFormat;
  readonly model: string;
  readonly stream: boolean;
  private chatBody: ChatBody | null = null;
  private promptCount: number | undefined;

  readonly call: RelayCall;

  constructor(asked: RelayCall) {
    this.format = formatOf(asked.format);
    const call = (this.call = this.format.canonical ? { ...asked, body: this.format.canonical(asked.body) } : asked);
    const { model, stream } = this.format.target(call);
    if (typeof model !== 'string' || !model.trim() || model.length > 255) invalid('model must be a model name');
    this.model = model;
    this.stream = stream;
    const missing = this.format.missing?.(call.body);
    if (missing) invalid(missing);
    // Converted formats refuse what cannot be served (built-in tools, stored state) before any channel is tried.
    if (this.format.toChat) this.chat();
  }

  /** The call as a chat request (the internal form). */
  chat(): ChatBody {
    if (this.chatBody) return this.chatBody;
    const body = this.call.body;
    try {
      return (this.chatBody = this.format.toChat ? this.format.toChat(body, this.model, this.stream) : (body as ChatBody));
    } catch (e) {
      if (e instanceof RelayInputError) invalid(e.message);
      throw e;
    }
  }

  /** Native pass-through: the upstream speaks the caller's format. */
  native(p: ProviderRelay): boolean {
    return p.native[this.call.format] !== undefined;
  }

  /** The upstream request for one channel: the provider's wire format, the mapped model, the channel's parameter override. */
  request(p: ProviderRelay, t: UpstreamTarget, upstreamModel: string, paramOverride: string | null): UpstreamCall {
    const { body } = this.call;
    const native = p.native[this.call.format];
    let call: UpstreamCall;
    if (native) call = native(t, body, upstreamModel, this.stream, this.call, this.call.files);
    else if (this.format.toProvider) call = this.format.toProvider(p, t, body, upstreamModel);
    else call = p.chat(t, { ...this.chat(), model: upstreamModel }, this.stream);
    const override = jsonObject(paramOverride);
    // A form (a transcription's) is sent as the caller made it: the reference overrides no audio parameter either.
    if (Object.keys(override).length && !(call.body instanceof FormData)) call = { ...call, body: { ...(call.body as Json), ...override } };
    return call;
  }

  /** How many times a per-call price is paid (see CallerFormat.priceUnits); `answer` the upstream's JSON. */
  units(answer?: unknown): number {
    return this.format.priceUnits?.(this.call.body, answer) ?? 1;
  }

  /** The reader that turns this channel's stream into the caller's. */
  reader(p: ProviderRelay, upstreamModel: string): StreamReader {
    const native = this.native(p);
    if (native && this.format.nativeReader) return this.format.nativeReader(this.usageShown, this.call.body);
    if (!this.format.encoder) throw new Error(`${this.format.name} answers are never streamed`);
    // An upstream of the caller's own format without a reader of its own (chat) passes its lines as they came.
    return pivotReader(p.chatStream(upstreamModel), this.format.encoder(this.call.body, upstreamModel), native, this.usageShown);
  }

  /** Prompt tokens counted with the tokenizer (when the upstream reported none). */
  countPrompt(): number {
    if (this.promptCount !== undefined) return this.promptCount;
    const { body, format } = this.call;
    const known = promptCounts.get(body);
    if (known?.format === format) return (this.promptCount = known.tokens);
    const tokens = this.format.promptTokens ? this.format.promptTokens(body) : promptTokens(this.chat());
    promptCounts.set(body, { format, tokens });
    return (this.promptCount = tokens);
  }

  /** The upstream's usage where it can be right, else counted: the prompt from the request, the completion from the text. */
  checkUsage(u: ChatUsage | null, completionText: () => string): UsageCheck {
    return checkedUsage(u, this.usageBounds(), new Counts(this, completionText));
  }

  /**
   * The usage of a stream cut short: the prompt as the upstream reported it (Anthropic's message_start,
   * Gemini's usageMetadata), else counted; the completion as the larger of its count so far and the text's.
   */
  checkCutUsage(u: ChatUsage | null, completionText: string): UsageCheck {
    return checkedUsage(u, this.usageBounds(), new Counts(this, completionText), { cut: true });
  }

  /** What a stream reader shows of a usage it passes: the billed counts when the upstream's are replaced. */
  private readonly usageShown: UsageShown = (u, text) => (!u || (u.prompt_tokens === 0 && u.completion_tokens === 0) ? null : billedUsage(this.checkUsage(u, text)));

  /** How many tokens this call's usage can hold: an answer without generated tokens (embeddings) none, a chat what it asked for. */
  usageBounds(): UsageBounds {
    if (!this.format.output) return this.format.uncappedOutput ? usageBounds(undefined) : { ...usageBounds(undefined), completion: 0 };
    const chat = this.chat();
    return usageBounds(chat.max_completion_tokens ?? chat.max_tokens);
  }

  /** The path the caller's format has at its vendor (what channel-affinity rules match). */
  get path(): string {
    return this.format.vendorPath(this.model, this.stream);
  }
}

/** The tokenizer's counts of a call's usage check, each made only when asked (an object, not two closures a check). */
class Counts {
  constructor(
    private readonly plan: Plan,
    private readonly text: string | (() => string),
  ) {}

  prompt(): number {
    return this.plan.countPrompt();
  }

  completion(): number {
    return textTokens(typeof this.text === 'string' ? this.text : this.text());
  }
}
