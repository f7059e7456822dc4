import type { RelayCall } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import { jsonObject } from '../../kit/json/object.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { nativeGenerateContentReader, nativeMessagesReader } from './native-readers.js';
import { chatEncoder, nativeResponsesReader, pivotReader, responsesEncoder, type StreamReader } from './readers.js';
import { billedUsage, type UsageShown } from './shown-usage.js';
import { inputTokens, promptTokens, textTokens } from './tokens.js';
import { checkedUsage, usageBounds, type UsageBounds, type UsageCheck } from './usage.js';
import { messagesToChat } from './wire/anthropic-caller.js';
import { messagesStream } from './wire/anthropic-caller-stream.js';
import { generateContentToChat } from './wire/gemini-caller.js';
import { generateContentStream } from './wire/gemini-caller-stream.js';
import { RelayInputError, responsesToChat } from './wire/responses.js';
import { type ChatBody, type ChatUsage, type EmbeddingsBody, type Json } from '../providers/pivot.js';
import { UnsupportedByChannel, type ProviderRelay, type UpstreamCall } from '../providers/types.js';

function invalid(detail: string): never {
  throw new AppError('relay_invalid_request', { params: { detail } });
}

/** What one call asks for, checked once, and how it is sent to each channel tried. */
export class Plan {
  readonly model: string;
  readonly stream: boolean;
  private chatBody: ChatBody | null = null;
  private promptCount: number | undefined;

  constructor(readonly call: RelayCall) {
    const body = call.body;
    const model = call.format === 'gemini' ? call.modelInPath?.model : body.model;
    if (typeof model !== 'string' || !model.trim() || model.length > 255) invalid('model must be a model name');
    this.model = model;
    this.stream = call.format === 'gemini' ? call.modelInPath?.stream === true : call.format !== 'embeddings' && body.stream === true;
    if (call.format === 'chat' && (!Array.isArray(body.messages) || body.messages.length === 0)) invalid('messages must be a non-empty list');
    if (call.format === 'responses' && body.input === undefined) invalid('input is required');
    if (call.format === 'embeddings' && body.input === undefined) invalid('input is required');
    // Converted formats refuse what cannot be served (built-in tools, stored state) before any channel is tried.
    if (call.format === 'responses' || call.format === 'anthropic' || call.format === 'gemini') this.chat();
  }

  /** The call as a chat request (the pivot format). */
  chat(): ChatBody {
    if (this.chatBody) return this.chatBody;
    const body = this.call.body;
    try {
      switch (this.call.format) {
        case 'responses':
          return (this.chatBody = responsesToChat(body));
        case 'anthropic':
          return (this.chatBody = messagesToChat(body));
        case 'gemini':
          return (this.chatBody = generateContentToChat(body, this.model, this.stream));
        default:
          return (this.chatBody = body as ChatBody);
      }
    } catch (e) {
      if (e instanceof RelayInputError) invalid(e.message);
      throw e;
    }
  }

  /** Whether the caller asked a chat stream for its usage chunk. */
  private includeUsage(): boolean {
    const o = this.call.body.stream_options as { include_usage?: unknown } | undefined;
    return o?.include_usage === true;
  }

  /** Native pass-through: the upstream speaks the caller's format. */
  native(p: ProviderRelay): boolean {
    return p.native[this.call.format] !== undefined;
  }

  /** The upstream request for one channel: the family's format, the mapped model, the channel's parameter override. */
  request(p: ProviderRelay, t: UpstreamTarget, upstreamModel: string, paramOverride: string | null): UpstreamCall {
    let call: UpstreamCall;
    const { format, body } = this.call;
    const native = p.native[format];
    if (native) {
      call = native(t, body, upstreamModel, this.stream);
    } else if (format === 'embeddings') {
      // Another channel of the model may serve them: a failure of this channel, not of the call.
      if (!p.embeddings) throw new UnsupportedByChannel(`channel type ${t.type} serves no embeddings`, 'this model serves no embeddings');
      call = p.embeddings(t, { ...body, model: upstreamModel } as EmbeddingsBody);
    } else {
      call = p.chat(t, { ...this.chat(), model: upstreamModel }, this.stream);
    }
    const override = jsonObject(paramOverride);
    if (Object.keys(override).length) call = { ...call, body: { ...(call.body as Json), ...override } };
    return call;
  }

  /** The reader that turns this channel's stream into the caller's. */
  reader(p: ProviderRelay, upstreamModel: string): StreamReader {
    const native = this.native(p);
    switch (this.call.format) {
      case 'responses':
        return native ? nativeResponsesReader(this.usageShown) : pivotReader(p.chatStream(upstreamModel), responsesEncoder(this.call.body, upstreamModel), false, this.usageShown);
      case 'anthropic':
        return native ? nativeMessagesReader(this.usageShown) : pivotReader(p.chatStream(upstreamModel), messagesStream(upstreamModel), false, this.usageShown);
      case 'gemini':
        return native ? nativeGenerateContentReader(this.usageShown) : pivotReader(p.chatStream(upstreamModel), generateContentStream(upstreamModel), false, this.usageShown);
      default:
        return pivotReader(p.chatStream(upstreamModel), chatEncoder(this.includeUsage()), native, this.usageShown);
    }
  }

  /** Prompt tokens counted with the tokenizer (when the upstream reported none). */
  countPrompt(): number {
    return (this.promptCount ??= this.call.format === 'embeddings' ? inputTokens(this.call.body.input) : promptTokens(this.chat()));
  }

  /** The upstream's usage where it can be right, else counted: the prompt from the request, the completion from the text. */
  checkUsage(u: ChatUsage | null, completionText: () => string): UsageCheck {
    return checkedUsage(u, this.usageBounds(), { prompt: () => this.countPrompt(), completion: () => textTokens(completionText()) });
  }

  /** What a stream reader shows of a usage it passes: the billed counts when the upstream's are replaced. */
  private readonly usageShown: UsageShown = (u, text) => (!u || (u.prompt_tokens === 0 && u.completion_tokens === 0) ? null : billedUsage(this.checkUsage(u, text)));

  /** How many tokens this call's usage can hold: an embedding has no completion, a chat what it asked for. */
  usageBounds(): UsageBounds {
    if (this.call.format === 'embeddings') return { ...usageBounds(undefined), completion: 0 };
    const chat = this.chat();
    return usageBounds(chat.max_completion_tokens ?? chat.max_tokens);
  }

  /** The path the caller's format has at its vendor (what channel-affinity rules match). */
  get path(): string {
    switch (this.call.format) {
      case 'chat':
        return '/v1/chat/completions';
      case 'responses':
        return '/v1/responses';
      case 'anthropic':
        return '/v1/messages';
      case 'gemini':
        return `/v1beta/models/${this.model}:${this.stream ? 'streamGenerateContent' : 'generateContent'}`;
      default:
        return '/v1/embeddings';
    }
  }
}
