import { isObject, jsonObject, objectOf } from '../../../kit/json/object.js';
import { contentText, unixNow, type ChatBody, type ChatCompletion, type ChatMessage, type Json, type ToolCall } from '../pivot.js';
import { UpstreamPayloadError, type ProviderRelay } from '../types.js';
import { countTokensCall, messagesCall } from './api.js';
import { anthropicStreamDecoder, finishReason, payloadError, UNKNOWN_MESSAGE_ID, usageToChat } from './stream.js';

/** Anthropic requires max_tokens; OpenAI callers often leave it out. */
const DEFAULT_MAX_TOKENS = 4096;

const THINKING_BUDGET = new Map<unknown, number>([
  ['low', 1024],
  ['medium', 4096],
  ['high', 16384],
]);

type Block = Json;
interface Turn {
  role: 'user' | 'assistant';
  content: Block[];
}

function imageBlock(part: Json): Block {
  const url = typeof part.image_url === 'string' ? part.image_url : String(objectOf(part.image_url).url ?? '');
  const inline = /^data:([^;,]+)(?:;[^;,]*)*;base64,(.*)$/s.exec(url);
  if (inline) return { type: 'image', source: { type: 'base64', media_type: inline[1], data: inline[2] } };
  return { type: 'image', source: { type: 'url', url } };
}

/** Text and image parts as Anthropic blocks; empty text is left out (Anthropic rejects empty text blocks). */
function contentBlocks(content: ChatMessage['content']): Block[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  const blocks: Block[] = [];
  for (const part of content) {
    if (part.type === 'image_url') blocks.push(imageBlock(part));
    else {
      const text = contentText([part]);
      if (text) blocks.push({ type: 'text', text });
    }
  }
  return blocks;
}

/** Anthropic's tool input must be an object: arguments that are not a JSON object become `{}`. */
function toolUseBlocks(calls: ChatMessage['tool_calls']): Block[] {
  if (!Array.isArray(calls)) return [];
  return calls.map((call) => ({ type: 'tool_use', id: call.id, name: call.function?.name ?? '', input: jsonObject(call.function?.arguments) }));
}

function toolResultBlock(message: ChatMessage): Block {
  const content = typeof message.content === 'string' ? message.content : contentBlocks(message.content);
  return { type: 'tool_result', tool_use_id: message.tool_call_id ?? '', content };
}

function messageBlocks(message: ChatMessage): Block[] {
  if (message.role === 'tool') return [toolResultBlock(message)];
  if (message.role === 'assistant') return [...contentBlocks(message.content), ...toolUseBlocks(message.tool_calls)];
  return contentBlocks(message.content);
}

/**
 * System and developer messages become `system`; the rest alternate user/assistant as Anthropic requires:
 * tool results are user content, and consecutive messages of one role are merged into one.
 */
function convertMessages(messages: ChatMessage[]): { system: string; messages: Json[] } {
  const system: string[] = [];
  const turns: Turn[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') {
      const text = contentText(message.content);
      if (text) system.push(text);
      continue;
    }
    const blocks = messageBlocks(message);
    if (blocks.length === 0) continue;
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    const last = turns.at(-1);
    if (last?.role === role) last.content.push(...blocks);
    else turns.push({ role, content: blocks });
  }
  // A lone text block is sent as plain string content, the form Anthropic documents first.
  const compact = (blocks: Block[]) => (blocks.length === 1 && blocks[0].type === 'text' ? blocks[0].text : blocks);
  return { system: system.join('\n\n'), messages: turns.map((t) => ({ role: t.role, content: compact(t.content) })) };
}

function toolDefinitions(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  return tools
    .filter((tool) => isObject(tool) && tool.type === 'function' && isObject(tool.function))
    .map((tool) => {
      const fn = objectOf(tool.function);
      const definition: Json = { name: fn.name, input_schema: isObject(fn.parameters) ? fn.parameters : { type: 'object', properties: {} } };
      if (typeof fn.description === 'string') definition.description = fn.description;
      return definition;
    });
}

function toolChoice(choice: unknown, parallelToolCalls: unknown): Json | null {
  if (choice === 'none') return { type: 'none' };
  let out: Json | null = null;
  if (choice === 'auto') out = { type: 'auto' };
  else if (choice === 'required') out = { type: 'any' };
  else if (isObject(choice) && choice.type === 'function' && typeof objectOf(choice.function).name === 'string') {
    out = { type: 'tool', name: objectOf(choice.function).name };
  }
  if (parallelToolCalls === false) {
    out ??= { type: 'auto' };
    out.disable_parallel_tool_use = true;
  }
  return out;
}

function stopSequences(stop: unknown): string[] {
  if (typeof stop === 'string') return stop ? [stop] : [];
  return Array.isArray(stop) ? stop.filter((s): s is string => typeof s === 'string' && s !== '') : [];
}

const positive = (v: unknown): number | undefined => (typeof v === 'number' && v > 0 ? v : undefined);

function messagesRequest(body: ChatBody, stream: boolean): Json {
  const { system, messages } = convertMessages(body.messages);
  const out: Json = { model: body.model, messages };
  if (system) out.system = system;

  let maxTokens = positive(body.max_tokens) ?? positive(body.max_completion_tokens) ?? DEFAULT_MAX_TOKENS;
  const budget = THINKING_BUDGET.get(body.reasoning_effort);
  if (budget !== undefined) {
    out.thinking = { type: 'enabled', budget_tokens: budget };
    // Anthropic requires max_tokens above the thinking budget; leave room for the answer itself.
    if (maxTokens <= budget) maxTokens = budget + DEFAULT_MAX_TOKENS;
  }
  out.max_tokens = maxTokens;

  for (const key of ['temperature', 'top_p', 'top_k']) if (typeof body[key] === 'number') out[key] = body[key];
  const stop = stopSequences(body.stop);
  if (stop.length > 0) out.stop_sequences = stop;

  // Anthropic rejects tool_choice without tools.
  const tools = toolDefinitions(body.tools);
  if (tools.length > 0) {
    out.tools = tools;
    const choice = toolChoice(body.tool_choice, body.parallel_tool_calls);
    if (choice) out.tool_choice = choice;
  }
  if (typeof body.user === 'string' && body.user) out.metadata = { user_id: body.user };
  out.stream = stream;
  return out;
}

function chatResult(json: unknown, model: string): ChatCompletion {
  if (!isObject(json)) throw new UpstreamPayloadError('Anthropic returned a body that is not a JSON object');
  if (json.type === 'error' || isObject(json.error)) throw payloadError(json);

  let text = '';
  let reasoning = '';
  const toolCalls: ToolCall[] = [];
  for (const block of Array.isArray(json.content) ? json.content.filter(isObject) : []) {
    if (block.type === 'text' && typeof block.text === 'string') text += block.text;
    else if (block.type === 'thinking' && typeof block.thinking === 'string') reasoning += block.thinking;
    else if (block.type === 'tool_use') {
      const name = typeof block.name === 'string' ? block.name : '';
      toolCalls.push({ id: String(block.id ?? ''), type: 'function', function: { name, arguments: JSON.stringify(block.input ?? {}) } });
    }
  }

  const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text === '' && toolCalls.length > 0 ? null : text };
  if (reasoning) message.reasoning_content = reasoning;
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  return {
    id: typeof json.id === 'string' ? json.id : UNKNOWN_MESSAGE_ID,
    object: 'chat.completion',
    created: unixNow(),
    model,
    choices: [{ index: 0, message, finish_reason: finishReason(json.stop_reason) }],
    usage: usageToChat(objectOf(json.usage)),
  };
}

/** Anthropic Messages API (`POST /v1/messages`), which Anthropic callers' requests go to as they are; it has no embeddings. */
export const anthropicRelay: ProviderRelay = {
  chat: (t, body, stream) => messagesCall(t, messagesRequest(body, stream), stream),
  chatResult,
  chatStream: anthropicStreamDecoder,
  native: { anthropic: (t, body, model, stream, vendor) => messagesCall(t, { ...body, model }, stream, vendor) },
  countTokens: { anthropic: (t, body, model, vendor) => countTokensCall(t, { ...body, model }, vendor) },
};
