import { isObject, objectOf, stringOf } from '../../../../kit/json/object.js';
import { contentText, type ChatBody, type ChatMessage, type Json, type ToolCall } from '../../../providers/pivot.js';
import { RelayInputError } from '../types.js';

/** A Messages request (`POST /v1/messages`, what Claude clients send) as a chat request. */

/** A system message's or `system`'s content as text blocks (cache_control and the like kept). */
function systemBlocks(content: unknown): Json[] {
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  return Array.isArray(content) ? content.map(objectOf).filter((b) => b.type === 'text') : [];
}

/**
 * The body as Anthropic's API takes it: `role: "system"` entries of `messages` (Claude Code sends one; the
 * API refuses them) are appended to `system`, in order; string content stays a string.
 */
export function foldSystemMessages(body: Json): Json {
  if (!Array.isArray(body.messages) || !body.messages.some((m) => objectOf(m).role === 'system')) return body;
  const folded = body.messages.filter((m) => objectOf(m).role === 'system').map((m) => objectOf(m).content);
  const messages = body.messages.filter((m) => objectOf(m).role !== 'system');
  const parts = [body.system, ...folded].filter((c) => c !== undefined && c !== null && c !== '');
  const system = parts.every((c) => typeof c === 'string') ? parts.join('\n\n') : parts.flatMap(systemBlocks);
  return { ...body, system, messages };
}

/** Thinking budgets (budget_tokens) as chat reasoning efforts: the Anthropic channel turns them back into 1024 / 4096 / 16384. */
function reasoningEffort(budget: unknown): string {
  const n = typeof budget === 'number' ? budget : 0;
  if (n < 4096) return 'low';
  return n < 16384 ? 'medium' : 'high';
}

function imagePart(block: Json): Json {
  const source = objectOf(block.source);
  if (source.type === 'base64') return { type: 'image_url', image_url: { url: `data:${stringOf(source.media_type)};base64,${stringOf(source.data)}` } };
  if (source.type === 'url' && typeof source.url === 'string') return { type: 'image_url', image_url: { url: source.url } };
  throw new RelayInputError(`image sources of type "${String(source.type)}" are not supported: send base64 or url`, 'messages');
}

/** The text and images of a list of blocks (a tool result's content, say) as chat content parts. */
function contentParts(blocks: Json[]): Json[] {
  const parts: Json[] = [];
  for (const block of blocks) {
    if (block.type === 'text') parts.push({ type: 'text', text: stringOf(block.text) });
    else if (block.type === 'image') parts.push(imagePart(block));
    else throw new RelayInputError(`content blocks of type "${String(block.type)}" are not supported`, 'messages');
  }
  return parts;
}

function blocksOf(content: unknown): Json[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) throw new RelayInputError('message content must be a string or a list of content blocks', 'messages');
  return content.map(objectOf);
}

/** A user turn: its tool results first (chat wants them right after the calls), then its text and images. */
function userMessages(content: unknown): ChatMessage[] {
  const tools: ChatMessage[] = [];
  const parts: Json[] = [];
  for (const block of blocksOf(content)) {
    if (block.type !== 'tool_result') {
      parts.push(...contentParts([block]));
      continue;
    }
    const result = typeof block.content === 'string' || block.content == null ? [{ type: 'text', text: stringOf(block.content) }] : contentParts(blocksOf(block.content));
    tools.push({ role: 'tool', tool_call_id: stringOf(block.tool_use_id), content: contentText(result) });
    // A chat tool message holds text only: images a tool returned follow as user content.
    parts.push(...result.filter((p) => p.type === 'image_url'));
  }
  if (parts.length === 0) return tools;
  const user: ChatMessage = { role: 'user', content: parts.length === 1 && parts[0].type === 'text' ? String(parts[0].text) : parts };
  return [...tools, user];
}

/** An assistant turn: its text, and its tool_use blocks as tool calls; thinking cannot go back through chat. */
function assistantMessage(content: unknown): ChatMessage | null {
  let text = '';
  const calls: ToolCall[] = [];
  for (const block of blocksOf(content)) {
    if (block.type === 'text') text += stringOf(block.text);
    else if (block.type === 'tool_use') calls.push({ id: stringOf(block.id), type: 'function', function: { name: stringOf(block.name), arguments: JSON.stringify(block.input ?? {}) } });
    else if (block.type === 'thinking' || block.type === 'redacted_thinking') continue;
    else throw new RelayInputError(`assistant content blocks of type "${String(block.type)}" are not supported`, 'messages');
  }
  if (!text && calls.length === 0) return null;
  const message: ChatMessage = { role: 'assistant', content: text || null };
  if (calls.length) message.tool_calls = calls;
  return message;
}

function systemText(system: unknown): string {
  if (typeof system === 'string') return system;
  if (!Array.isArray(system)) return '';
  return system.map((block) => stringOf(objectOf(block).text)).filter(Boolean).join('\n\n');
}

function chatTool(raw: unknown): Json {
  const tool = objectOf(raw);
  // Anthropic's server tools (web_search_20250305, bash_20250124, …) have a versioned type; client tools none, or "custom".
  if (tool.type !== undefined && tool.type !== 'custom') throw new RelayInputError(`tools of type "${String(tool.type)}" are not supported: only client tools are`, 'tools');
  const fn: Json = { name: stringOf(tool.name) };
  if (typeof tool.description === 'string') fn.description = tool.description;
  fn.parameters = isObject(tool.input_schema) ? tool.input_schema : { type: 'object', properties: {} };
  return { type: 'function', function: fn };
}

function chatToolChoice(choice: Json): unknown {
  if (choice.type === 'auto') return 'auto';
  if (choice.type === 'any') return 'required';
  if (choice.type === 'none') return 'none';
  if (choice.type === 'tool' && typeof choice.name === 'string') return { type: 'function', function: { name: choice.name } };
  throw new RelayInputError(`tool_choice ${JSON.stringify(choice)} is not supported`, 'tool_choice');
}

export function messagesToChat(sent: Json): ChatBody {
  const body = foldSystemMessages(sent);
  if (typeof body.model !== 'string' || !body.model) throw new RelayInputError('model is required', 'model');
  if (!Array.isArray(body.messages) || body.messages.length === 0) throw new RelayInputError('messages must be a non-empty list', 'messages');
  const messages: ChatMessage[] = [];
  const system = systemText(body.system);
  if (system) messages.push({ role: 'system', content: system });
  for (const raw of body.messages) {
    const turn = objectOf(raw);
    if (turn.role === 'user') messages.push(...userMessages(turn.content));
    else if (turn.role === 'assistant') {
      const message = assistantMessage(turn.content);
      if (message) messages.push(message);
    } else throw new RelayInputError(`message role "${String(turn.role)}" is not supported: user or assistant`, 'messages');
  }
  if (messages.every((m) => m.role === 'system')) throw new RelayInputError('the messages hold no content', 'messages');
  const chat: ChatBody = { model: body.model, messages };

  if (typeof body.max_tokens === 'number') chat.max_completion_tokens = body.max_tokens;
  for (const key of ['temperature', 'top_p', 'top_k'] as const) if (typeof body[key] === 'number') chat[key] = body[key];
  if (Array.isArray(body.stop_sequences) && body.stop_sequences.length) chat.stop = body.stop_sequences;

  const tools = Array.isArray(body.tools) ? body.tools.map(chatTool) : [];
  const choice = objectOf(body.tool_choice);
  if (tools.length) {
    chat.tools = tools;
    if (body.tool_choice != null) chat.tool_choice = chatToolChoice(choice);
    if (choice.disable_parallel_tool_use === true) chat.parallel_tool_calls = false;
  }
  const thinking = objectOf(body.thinking);
  if (thinking.type === 'enabled') chat.reasoning_effort = reasoningEffort(thinking.budget_tokens);
  const user = objectOf(body.metadata).user_id;
  if (typeof user === 'string' && user) chat.user = user;

  if (typeof body.stream === 'boolean') chat.stream = body.stream;
  if (body.stream === true) chat.stream_options = { include_usage: true };
  return chat;
}

