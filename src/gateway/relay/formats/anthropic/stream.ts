import { randomBytes } from 'node:crypto';
import type { ChatChunk, ChatUsage, FinishReason, Json } from '../../../providers/pivot.js';
import { messageIdOf, messagesUsageOf, randomMessageId, stopReasonOf, type MessageIds } from './answer.js';

/** Writes chat chunks as Anthropic's Messages SSE stream; each method returns the text to send (possibly empty). */
export interface MessagesStreamEncoder {
  chunk(c: ChatChunk): string;
  /** The upstream finished: closes the open block, sends message_delta (stop reason, usage) and message_stop. */
  end(): string;
  /** The upstream failed after output began: Anthropic's `error` event, and nothing after it. */
  error(message: string, code: string): string;
}

type ToolCallDelta = NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number];

interface OpenBlock {
  kind: 'text' | 'thinking' | 'tool_use';
  index: number;
  /** The chat tool call index a tool_use block stands for. */
  toolIndex?: number;
}

const randomToolId = () => `toolu_${randomBytes(12).toString('hex')}`;

/** An SSE event as Anthropic writes it: the event name, repeated as `type` in the data. */
export const anthropicEvent = (type: string, fields: Json = {}): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields })}\n\n`;

/** Anthropic's error event (what its API sends when a stream fails: an api_error, the stream ends). */
export const anthropicErrorEvent = (message: string): string => anthropicEvent('error', { error: { type: 'api_error', message } });

/**
 * Content blocks follow one another as in Anthropic's own streams: one block is open at a time; text,
 * thinking and each tool call are blocks of their own, numbered from 0. The input_tokens of message_start
 * are 0 (a chat stream gives its usage at the end): message_delta carries the whole usage, which Anthropic
 * documents as cumulative and its SDKs read.
 */
export function messagesStream(model: string, ids: MessageIds = randomMessageId): MessagesStreamEncoder {
  let started = false;
  let finished = false;
  let usage: ChatUsage | null = null;
  let finish: FinishReason = null;
  let nextIndex = 0;
  let open: OpenBlock | null = null;
  /** Chat tool call indexes that already had their block. */
  const toolsSeen = new Set<number>();

  function start(c?: ChatChunk): string {
    if (started) return '';
    started = true;
    if (c?.usage) usage = c.usage;
    const message = { id: messageIdOf(c?.id, ids), type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } };
    return anthropicEvent('message_start', { message });
  }

  function close(): string {
    if (!open) return '';
    const index = open.index;
    open = null;
    return anthropicEvent('content_block_stop', { index });
  }

  function openBlock(kind: OpenBlock['kind'], contentBlock: Json, toolIndex?: number): string {
    const out = close();
    open = { kind, index: nextIndex++, toolIndex };
    return out + anthropicEvent('content_block_start', { index: open.index, content_block: contentBlock });
  }

  const delta = (fields: Json) => anthropicEvent('content_block_delta', { index: open!.index, delta: fields });

  function text(t: string): string {
    const out = open?.kind === 'text' ? '' : openBlock('text', { type: 'text', text: '' });
    return out + delta({ type: 'text_delta', text: t });
  }

  function thinking(t: string): string {
    const out = open?.kind === 'thinking' ? '' : openBlock('thinking', { type: 'thinking', thinking: '', signature: '' });
    return out + delta({ type: 'thinking_delta', thinking: t });
  }

  function toolCall(call: ToolCallDelta, position: number): string {
    const toolIndex = typeof call.index === 'number' ? call.index : position;
    let out = '';
    if (!(open?.kind === 'tool_use' && open.toolIndex === toolIndex)) {
      // A closed block cannot be reopened; OpenAI-style upstreams send one call's arguments after another.
      if (toolsSeen.has(toolIndex)) return '';
      toolsSeen.add(toolIndex);
      out += openBlock('tool_use', { type: 'tool_use', id: call.id || randomToolId(), name: call.function?.name ?? '', input: {} }, toolIndex);
    }
    const args = call.function?.arguments;
    return args ? out + delta({ type: 'input_json_delta', partial_json: args }) : out;
  }

  return {
    chunk(c) {
      if (finished) return '';
      let out = start(c);
      if (c.usage) usage = c.usage;
      const choice = c.choices?.[0];
      if (!choice) return out;
      const d = choice.delta ?? {};
      if (d.reasoning_content) out += thinking(d.reasoning_content);
      if (d.content) out += text(d.content);
      for (const [position, call] of (d.tool_calls ?? []).entries()) out += toolCall(call, position);
      if (choice.finish_reason) finish = choice.finish_reason;
      return out;
    },

    end() {
      if (finished) return '';
      let out = start() + close();
      finished = true;
      out += anthropicEvent('message_delta', { delta: { stop_reason: stopReasonOf(finish, toolsSeen.size > 0), stop_sequence: null }, usage: messagesUsageOf(usage) });
      return out + anthropicEvent('message_stop');
    },

    error(message) {
      if (finished) return '';
      finished = true;
      return anthropicErrorEvent(message);
    },
  };
}
