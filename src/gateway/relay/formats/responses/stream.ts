import {
  functionCallItem,
  incompleteReason,
  messageItem,
  outputText,
  randomIds,
  reasoningItem,
  responseId,
  responseObject,
  type IdSource,
  type ItemStatus,
  type ResponseState,
} from './answer.js';
import { unixNow, type ChatChunk, type ChatUsage, type FinishReason, type Json } from '../../../providers/pivot.js';

/** Writes chat chunks as the Responses SSE stream; each method returns the text to send (possibly empty). */
export interface ResponsesStreamEncoder {
  chunk(c: ChatChunk): string;
  /** The upstream finished: closes the open items and sends response.completed (or response.incomplete). */
  end(): string;
  /** The upstream failed after output began: sends `error` and response.failed; open items stay as they are. */
  error(message: string, code: string): string;
}

interface OpenItem {
  id: string;
  outputIndex: number;
  status: ItemStatus;
}
interface MessageState extends OpenItem { kind: 'message'; text: string }
interface ReasoningState extends OpenItem { kind: 'reasoning'; text: string }
interface FunctionCallState extends OpenItem { kind: 'function_call'; callId: string; name: string; args: string }
type ItemState = MessageState | ReasoningState | FunctionCallState;

type ToolCallDelta = NonNullable<ChatChunk['choices'][number]['delta']['tool_calls']>[number];

function itemShape(item: ItemState): Json {
  if (item.kind === 'message') return messageItem(item.id, item.status, item.text);
  if (item.kind === 'reasoning') return reasoningItem(item.id, item.text);
  return functionCallItem(item.id, item.status, item.callId, item.name, item.args);
}

/**
 * Output items follow one another as in OpenAI's own streams: reasoning and text close when other output
 * begins (more of them later opens a new item); function calls stay open until the end, since a chat
 * upstream may still send arguments for an earlier call index.
 */
export function responsesStream(request: Json, model: string, ids: IdSource = randomIds): ResponsesStreamEncoder {
  let sequence = 0;
  let started = false;
  let finished = false;
  let id = '';
  let createdAt = 0;
  let usage: ChatUsage | null = null;
  let finish: FinishReason = null;
  const items: ItemState[] = [];
  let openMessage: MessageState | null = null;
  let openReasoning: ReasoningState | null = null;
  const calls = new Map<number, FunctionCallState>();

  const event = (type: string, fields: Json): string => `event: ${type}\ndata: ${JSON.stringify({ type, ...fields, sequence_number: sequence++ })}\n\n`;

  const snapshot = (status: ResponseState['status'], extra: Partial<ResponseState> = {}): Json =>
    responseObject(request, { id, createdAt, model, status, output: items.map(itemShape), usage, ...extra });

  function start(c?: ChatChunk): string {
    if (started) return '';
    started = true;
    id = responseId(c?.id, ids);
    createdAt = typeof c?.created === 'number' ? c.created : unixNow();
    const response = snapshot('in_progress');
    return event('response.created', { response }) + event('response.in_progress', { response });
  }

  function add<T extends ItemState>(item: T): T {
    items.push(item);
    return item;
  }

  function closeMessage(status: ItemStatus = 'completed'): string {
    if (!openMessage) return '';
    const m = openMessage;
    openMessage = null;
    m.status = status;
    const at = { item_id: m.id, output_index: m.outputIndex, content_index: 0 };
    return (
      event('response.output_text.done', { ...at, text: m.text, logprobs: [] }) +
      event('response.content_part.done', { ...at, part: outputText(m.text) }) +
      event('response.output_item.done', { output_index: m.outputIndex, item: itemShape(m) })
    );
  }

  function closeReasoning(): string {
    if (!openReasoning) return '';
    const r = openReasoning;
    openReasoning = null;
    r.status = 'completed';
    const at = { item_id: r.id, output_index: r.outputIndex, summary_index: 0 };
    return (
      event('response.reasoning_summary_text.done', { ...at, text: r.text }) +
      event('response.reasoning_summary_part.done', { ...at, part: { type: 'summary_text', text: r.text } }) +
      event('response.output_item.done', { output_index: r.outputIndex, item: itemShape(r) })
    );
  }

  function closeCall(call: FunctionCallState, status: ItemStatus): string {
    call.status = status;
    return (
      event('response.function_call_arguments.done', { item_id: call.id, output_index: call.outputIndex, name: call.name, arguments: call.args }) +
      event('response.output_item.done', { output_index: call.outputIndex, item: itemShape(call) })
    );
  }

  function reasoningDelta(text: string): string {
    let out = '';
    if (!openReasoning) {
      out += closeMessage();
      openReasoning = add<ReasoningState>({ kind: 'reasoning', id: ids('rs'), outputIndex: items.length, status: 'in_progress', text: '' });
      out += event('response.output_item.added', { output_index: openReasoning.outputIndex, item: itemShape(openReasoning) });
      out += event('response.reasoning_summary_part.added', { item_id: openReasoning.id, output_index: openReasoning.outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    openReasoning.text += text;
    return out + event('response.reasoning_summary_text.delta', { item_id: openReasoning.id, output_index: openReasoning.outputIndex, summary_index: 0, delta: text });
  }

  function textDelta(text: string): string {
    let out = '';
    if (!openMessage) {
      out += closeReasoning();
      openMessage = add<MessageState>({ kind: 'message', id: ids('msg'), outputIndex: items.length, status: 'in_progress', text: '' });
      out += event('response.output_item.added', { output_index: openMessage.outputIndex, item: itemShape(openMessage) });
      out += event('response.content_part.added', { item_id: openMessage.id, output_index: openMessage.outputIndex, content_index: 0, part: outputText('') });
    }
    openMessage.text += text;
    return out + event('response.output_text.delta', { item_id: openMessage.id, output_index: openMessage.outputIndex, content_index: 0, delta: text, logprobs: [] });
  }

  function toolCallDelta(delta: ToolCallDelta, position: number): string {
    let out = '';
    const index = typeof delta.index === 'number' ? delta.index : position;
    let call = calls.get(index);
    if (!call) {
      out += closeReasoning() + closeMessage();
      call = add<FunctionCallState>({ kind: 'function_call', id: ids('fc'), outputIndex: items.length, status: 'in_progress', callId: delta.id || ids('call'), name: delta.function?.name ?? '', args: '' });
      calls.set(index, call);
      out += event('response.output_item.added', { output_index: call.outputIndex, item: itemShape(call) });
    } else if (!call.name && delta.function?.name) {
      call.name = delta.function.name;
    }
    const args = delta.function?.arguments;
    if (!args) return out;
    call.args += args;
    return out + event('response.function_call_arguments.delta', { item_id: call.id, output_index: call.outputIndex, delta: args });
  }

  return {
    chunk(c) {
      if (finished) return '';
      let out = start(c);
      if (c.usage) usage = c.usage;
      const choice = c.choices?.[0];
      if (!choice) return out;
      const delta = choice.delta ?? {};
      if (delta.reasoning_content) out += reasoningDelta(delta.reasoning_content);
      if (delta.content) out += textDelta(delta.content);
      for (const [position, call] of (delta.tool_calls ?? []).entries()) out += toolCallDelta(call, position);
      if (choice.finish_reason) finish = choice.finish_reason;
      return out;
    },

    end() {
      if (finished) return '';
      let out = start();
      finished = true;
      const reason = incompleteReason(finish);
      const status: ItemStatus = reason ? 'incomplete' : 'completed';
      for (const item of items) {
        if (item.status !== 'in_progress') continue;
        if (item.kind === 'message') out += closeMessage(status);
        else if (item.kind === 'reasoning') out += closeReasoning();
        else out += closeCall(item, status);
      }
      const final = reason ? 'incomplete' : 'completed';
      return out + event(`response.${final}`, { response: snapshot(final, { incompleteReason: reason }) });
    },

    error(message, code) {
      if (finished) return '';
      let out = start();
      finished = true;
      out += event('error', { code, message, param: null });
      return out + event('response.failed', { response: snapshot('failed', { error: { code, message } }) });
    },
  };
}
