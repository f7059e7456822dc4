import type { RelayCall } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import { jsonObject } from '../../kit/json/object.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { AttemptFailure } from './attempt.js';
import { chatEncoder, nativeResponsesReader, pivotReader, responsesEncoder, type StreamReader } from './readers.js';
import { inputTokens, promptTokens } from './tokens.js';
import { responsesCall } from './wire/openai.js';
import { RelayInputError, responsesToChat } from './wire/responses.js';
import type { ChatBody, Dialect, EmbeddingsBody, Json, UpstreamCall } from './wire/types.js';

function invalid(detail: string): never {
  throw new AppError('relay_invalid_request', { params: { detail } });
}

/** What one call asks for, checked once, and how it is sent to each channel tried. */
export class Plan {
  readonly model: string;
  readonly stream: boolean;
  private chatBody: ChatBody | null = null;

  constructor(readonly call: RelayCall) {
    const body = call.body;
    if (typeof body.model !== 'string' || !body.model.trim() || body.model.length > 255) invalid('model must be a model name');
    this.model = body.model;
    this.stream = call.format !== 'embeddings' && body.stream === true;
    if (call.format === 'chat' && (!Array.isArray(body.messages) || body.messages.length === 0)) invalid('messages must be a non-empty list');
    if (call.format === 'responses' && body.input === undefined) invalid('input is required');
    if (call.format === 'embeddings' && body.input === undefined) invalid('input is required');
    if (call.format === 'responses') this.chat(); // refuses what cannot be served (built-in tools, stored state) before any channel is tried
  }

  /** The call as a chat request (the pivot format). */
  chat(): ChatBody {
    if (this.chatBody) return this.chatBody;
    if (this.call.format === 'chat') return (this.chatBody = this.call.body as ChatBody);
    try {
      return (this.chatBody = responsesToChat(this.call.body));
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

  /** Native pass-through: the upstream speaks the caller's format (OpenAI and Azure channels). */
  native(d: Dialect): boolean {
    return d.family === 'openai' || d.family === 'azure';
  }

  /** The upstream request for one channel: the family's format, the mapped model, the channel's parameter override. */
  request(d: Dialect, t: UpstreamTarget, upstreamModel: string, paramOverride: string | null): UpstreamCall {
    let call: UpstreamCall;
    if (this.call.format === 'embeddings') {
      // Another channel of the model may serve them: a failure of this channel, not of the call.
      if (!d.embeddings) throw new AttemptFailure('relay_invalid_request', 0, `channel type ${t.type} serves no embeddings`, true);
      call = d.embeddings(t, { ...this.call.body, model: upstreamModel } as EmbeddingsBody);
    } else if (this.call.format === 'responses' && this.native(d)) {
      call = responsesCall(t, d.family as 'openai' | 'azure', { ...this.call.body, model: upstreamModel });
    } else {
      call = d.chat(t, { ...this.chat(), model: upstreamModel }, this.stream);
    }
    const override = jsonObject(paramOverride);
    if (Object.keys(override).length) call = { ...call, body: { ...(call.body as Json), ...override } };
    return call;
  }

  /** The reader that turns this channel's stream into the caller's. */
  reader(d: Dialect, upstreamModel: string): StreamReader {
    if (this.call.format === 'responses') {
      return this.native(d) ? nativeResponsesReader() : pivotReader(d.chatStream(upstreamModel), responsesEncoder(this.call.body, upstreamModel), false);
    }
    return pivotReader(d.chatStream(upstreamModel), chatEncoder(this.includeUsage()), this.native(d));
  }

  /** Prompt tokens counted with the tokenizer (when the upstream reported none). */
  countPrompt(): number {
    return this.call.format === 'embeddings' ? inputTokens(this.call.body.input) : promptTokens(this.chat());
  }

  get path(): string {
    return this.call.format === 'chat' ? '/v1/chat/completions' : this.call.format === 'responses' ? '/v1/responses' : '/v1/embeddings';
  }
}
