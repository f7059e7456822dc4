import { isObject, objectOf, stringOf } from '../../../../kit/json/object.js';
import { RelayInputError } from '../types.js';
import { contentText, type ChatBody, type ChatMessage, type Json, type ToolCall } from '../../../providers/pivot.js';

/** A Responses request (`POST /v1/responses`) as a chat request. */

/** These need state that OpenAI keeps server-side (earlier responses, conversations, stored prompts, background runs). */
const STATEFUL_FIELDS = ['previous_response_id', 'conversation', 'prompt'] as const;
/** Passed to chat unchanged. `metadata` is left out: OpenAI's chat API refuses it unless `store` is true. */
const SAME_NAMED_FIELDS = ['temperature', 'top_p', 'user', 'seed'] as const;
const MESSAGE_ROLES = new Set(['user', 'assistant', 'system', 'developer']);

export function responsesToChat(body: Json): ChatBody {
  if (typeof body.model !== 'string' || !body.model) throw new RelayInputError('model is required', 'model');
  for (const field of STATEFUL_FIELDS) {
    if (body[field] != null) throw new RelayInputError(`${field} is not supported: this gateway keeps no stored responses`, field);
  }
  if (body.background === true) throw new RelayInputError('background responses are not supported', 'background');

  const messages: ChatMessage[] = [];
  if (typeof body.instructions === 'string' && body.instructions) messages.push({ role: 'system', content: body.instructions });
  messages.push(...inputMessages(body.input));
  const chat: ChatBody = { model: body.model, messages };

  const tools = Array.isArray(body.tools) ? body.tools.map(chatTool) : [];
  if (tools.length) {
    chat.tools = tools;
    // OpenAI's chat API refuses parallel_tool_calls in a request without tools.
    if (typeof body.parallel_tool_calls === 'boolean') chat.parallel_tool_calls = body.parallel_tool_calls;
  }
  if (body.tool_choice != null) chat.tool_choice = chatToolChoice(body.tool_choice);
  if (typeof body.max_output_tokens === 'number') chat.max_completion_tokens = body.max_output_tokens;
  for (const field of SAME_NAMED_FIELDS) if (body[field] != null) chat[field] = body[field];

  const text = objectOf(body.text);
  const responseFormat = chatResponseFormat(text.format);
  if (responseFormat) chat.response_format = responseFormat;
  if (typeof text.verbosity === 'string') chat.verbosity = text.verbosity;
  const effort = objectOf(body.reasoning).effort;
  if (typeof effort === 'string') chat.reasoning_effort = effort;

  if (typeof body.stream === 'boolean') chat.stream = body.stream;
  if (body.stream === true) chat.stream_options = { include_usage: true };
  return chat;
}

function inputMessages(input: unknown): ChatMessage[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  if (!Array.isArray(input)) throw new RelayInputError('input must be a string or a list of items', 'input');
  const messages: ChatMessage[] = [];
  for (const raw of input) {
    const item = objectOf(raw);
    const type = item.type ?? 'message';
    if (type === 'message') messages.push(inputMessage(item));
    else if (type === 'function_call') addToolCall(messages, item);
    else if (type === 'function_call_output') messages.push({ role: 'tool', tool_call_id: stringOf(item.call_id), content: toolOutput(item.output) });
    else if (type === 'reasoning') continue; // a chat upstream cannot take earlier reasoning back
    else throw new RelayInputError(`input items of type "${String(type)}" are not supported`, 'input');
  }
  return messages;
}

function inputMessage(item: Json): ChatMessage {
  const role = item.role;
  if (typeof role !== 'string' || !MESSAGE_ROLES.has(role)) throw new RelayInputError(`message role "${String(role)}" is not supported`, 'input');
  if (typeof item.content === 'string') return { role: role as ChatMessage['role'], content: item.content };
  if (!Array.isArray(item.content)) throw new RelayInputError('message content must be a string or a list of parts', 'input');
  return { role: role as ChatMessage['role'], content: item.content.map(chatPart) };
}

function chatPart(raw: unknown): Json {
  const part = objectOf(raw);
  if (part.type === 'input_text' || part.type === 'output_text') return { type: 'text', text: stringOf(part.text) };
  if (part.type === 'input_image') {
    if (typeof part.image_url !== 'string' || !part.image_url) throw new RelayInputError('input_image by file_id is not supported: send image_url', 'input');
    const image: Json = { url: part.image_url };
    if (typeof part.detail === 'string') image.detail = part.detail;
    return { type: 'image_url', image_url: image };
  }
  throw new RelayInputError(`content parts of type "${String(part.type)}" are not supported`, 'input');
}

/** A turn's calls, and the text the model said before them, make one assistant message in chat. */
function addToolCall(messages: ChatMessage[], item: Json): void {
  const call: ToolCall = { id: stringOf(item.call_id), type: 'function', function: { name: stringOf(item.name), arguments: stringOf(item.arguments) } };
  const previous = messages.at(-1);
  if (previous?.role === 'assistant') previous.tool_calls = [...(previous.tool_calls ?? []), call];
  else messages.push({ role: 'assistant', content: null, tool_calls: [call] });
}

function toolOutput(output: unknown): string {
  if (typeof output === 'string') return output;
  if (Array.isArray(output)) return contentText(output.filter(isObject));
  return JSON.stringify(output ?? '');
}

function chatTool(raw: unknown): Json {
  const tool = objectOf(raw);
  if (tool.type !== 'function') throw new RelayInputError(`tools of type "${String(tool.type)}" are not supported: only function tools are`, 'tools');
  const fn: Json = { name: stringOf(tool.name) };
  for (const key of ['description', 'parameters', 'strict'] as const) if (tool[key] != null) fn[key] = tool[key];
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: unknown): unknown {
  if (choice === 'auto' || choice === 'none' || choice === 'required') return choice;
  const c = objectOf(choice);
  if (c.type === 'function' && typeof c.name === 'string') return { type: 'function', function: { name: c.name } };
  throw new RelayInputError(`tool_choice ${JSON.stringify(choice)} is not supported`, 'tool_choice');
}

function chatResponseFormat(format: unknown): Json | null {
  const f = objectOf(format);
  if (f.type === 'json_object') return { type: 'json_object' };
  if (f.type !== 'json_schema') return null; // plain text
  const schema: Json = { name: stringOf(f.name) };
  for (const key of ['description', 'schema', 'strict'] as const) if (f[key] != null) schema[key] = f[key];
  return { type: 'json_schema', json_schema: schema };
}

