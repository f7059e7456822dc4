import { isObject, listOf, objectOf, stringOf } from '../../../../kit/json/object.js';
import { contentText, type ChatBody, type ChatMessage, type Json, type ToolCall } from '../../../providers/pivot.js';
import { RelayInputError } from '../types.js';

/** A GenerateContentRequest (`POST /v1beta/models/{model}:generateContent`) as a chat request. */

/** Parts that need Gemini's own tools (code execution): a chat upstream cannot take them. */
const UNSUPPORTED_PARTS = ['executableCode', 'codeExecutionResult'];

/** Calls of the conversation, so a functionResponse finds the id of its call (Gemini names only the function). */
class CallIds {
  private count = 0;
  private readonly pending: { id: string; name: string }[] = [];

  call(fc: Json): string {
    const id = typeof fc.id === 'string' && fc.id ? fc.id : `call_${this.count}`;
    this.count++;
    this.pending.push({ id, name: stringOf(fc.name) });
    return id;
  }

  response(fr: Json): string {
    const at = typeof fr.id === 'string' && fr.id ? this.pending.findIndex((p) => p.id === fr.id) : this.pending.findIndex((p) => p.name === fr.name);
    if (at < 0) return typeof fr.id === 'string' && fr.id ? fr.id : `call_${stringOf(fr.name)}`;
    return this.pending.splice(at, 1)[0].id;
  }
}

function mediaPart(part: Json): Json {
  if (isObject(part.inlineData)) {
    const d = part.inlineData;
    return { type: 'image_url', image_url: { url: `data:${stringOf(d.mimeType) || 'application/octet-stream'};base64,${stringOf(d.data)}` } };
  }
  return { type: 'image_url', image_url: { url: stringOf(objectOf(part.fileData).fileUri) } };
}

function contentMessages(content: Json, ids: CallIds): ChatMessage[] {
  const model = content.role === 'model';
  if (content.role !== undefined && content.role !== 'user' && content.role !== 'model' && content.role !== 'function') {
    throw new RelayInputError(`content role "${String(content.role)}" is not supported: user or model`, 'contents');
  }
  const tools: ChatMessage[] = [];
  const parts: Json[] = [];
  const calls: ToolCall[] = [];
  for (const part of listOf(content.parts)) {
    const unsupported = UNSUPPORTED_PARTS.find((key) => key in part);
    if (unsupported) throw new RelayInputError(`parts holding ${unsupported} are not supported`, 'contents');
    if (isObject(part.functionCall)) {
      calls.push({ id: ids.call(part.functionCall), type: 'function', function: { name: stringOf(part.functionCall.name), arguments: JSON.stringify(part.functionCall.args ?? {}) } });
    } else if (isObject(part.functionResponse)) {
      tools.push({ role: 'tool', tool_call_id: ids.response(part.functionResponse), content: JSON.stringify(part.functionResponse.response ?? {}) });
    } else if (typeof part.text === 'string') {
      if (part.thought !== true) parts.push({ type: 'text', text: part.text }); // earlier thoughts cannot go back through chat
    } else if (isObject(part.inlineData) || isObject(part.fileData)) {
      parts.push(mediaPart(part));
    }
  }
  if (model) {
    const text = contentText(parts);
    if (!text && calls.length === 0) return [];
    const message: ChatMessage = { role: 'assistant', content: text || null };
    if (calls.length) message.tool_calls = calls;
    return [message];
  }
  if (parts.length === 0) return tools;
  const onlyText = parts.every((p) => p.type === 'text');
  return [...tools, { role: 'user', content: onlyText ? contentText(parts) : parts }];
}

/** Gemini's Schema (OpenAPI 3.0 subset, types often upper-case, `nullable`) as JSON Schema: `nullable` becomes a `null` type (and enum value). */
export function jsonSchemaOf(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'type' && typeof value === 'string') out.type = schema.nullable === true ? [value.toLowerCase(), 'null'] : value.toLowerCase();
    else if (key === 'nullable') continue;
    else if (key === 'enum' && Array.isArray(value)) out.enum = schema.nullable === true ? [...value, null] : value;
    else if (key === 'properties' && isObject(value)) out.properties = Object.fromEntries(Object.entries(value).map(([name, s]) => [name, jsonSchemaOf(s)]));
    else if (key === 'items') out.items = jsonSchemaOf(value);
    else if (key === 'anyOf' && Array.isArray(value)) out.anyOf = value.map(jsonSchemaOf);
    else out[key] = value;
  }
  return out;
}

function chatTools(tools: unknown): Json[] {
  const out: Json[] = [];
  for (const tool of listOf(tools)) {
    const other = Object.keys(tool).find((key) => key !== 'functionDeclarations');
    if (other) throw new RelayInputError(`tools of kind "${other}" are not supported: only functionDeclarations are`, 'tools');
    for (const fn of listOf(tool.functionDeclarations)) {
      const f: Json = { name: stringOf(fn.name) };
      if (typeof fn.description === 'string') f.description = fn.description;
      const parameters = isObject(fn.parametersJsonSchema) ? fn.parametersJsonSchema : isObject(fn.parameters) ? jsonSchemaOf(fn.parameters) : undefined;
      if (parameters) f.parameters = parameters;
      out.push({ type: 'function', function: f });
    }
  }
  return out;
}

function chatToolChoice(toolConfig: unknown): unknown {
  const config = objectOf(objectOf(toolConfig).functionCallingConfig);
  const names = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames : [];
  if (config.mode === 'NONE') return 'none';
  if (config.mode === 'ANY') return names.length === 1 && typeof names[0] === 'string' ? { type: 'function', function: { name: names[0] } } : 'required';
  if (config.mode === 'AUTO' || config.mode === 'VALIDATED') return 'auto';
  return undefined;
}

/** generationConfig fields with a chat field of the same meaning. */
const GENERATION_FIELDS: [gemini: string, chat: string][] = [
  ['temperature', 'temperature'],
  ['topP', 'top_p'],
  ['topK', 'top_k'],
  ['maxOutputTokens', 'max_completion_tokens'],
  ['candidateCount', 'n'],
  ['seed', 'seed'],
  ['presencePenalty', 'presence_penalty'],
  ['frequencyPenalty', 'frequency_penalty'],
];

/** A thinking budget as a chat reasoning effort (the Gemini channel turns them back into 1024 / 8192 / 24576); 0 and -1 (dynamic) name none. */
function reasoningEffort(thinking: Json): string | undefined {
  if (thinking.thinkingLevel === 'low' || thinking.thinkingLevel === 'high') return thinking.thinkingLevel;
  const budget = thinking.thinkingBudget;
  if (typeof budget !== 'number' || budget <= 0) return undefined;
  if (budget <= 1024) return 'low';
  return budget <= 8192 ? 'medium' : 'high';
}

function applyGenerationConfig(chat: ChatBody, config: Json): void {
  for (const [gemini, name] of GENERATION_FIELDS) if (typeof config[gemini] === 'number') chat[name] = config[gemini];
  if (Array.isArray(config.stopSequences) && config.stopSequences.length) chat.stop = config.stopSequences;
  if (config.responseMimeType === 'application/json') {
    const schema = isObject(config.responseJsonSchema) ? config.responseJsonSchema : isObject(config.responseSchema) ? jsonSchemaOf(config.responseSchema) : null;
    chat.response_format = schema ? { type: 'json_schema', json_schema: { name: 'response', schema } } : { type: 'json_object' };
  }
  const effort = reasoningEffort(objectOf(config.thinkingConfig));
  if (effort) chat.reasoning_effort = effort;
}

export function generateContentToChat(body: Json, model: string, stream: boolean): ChatBody {
  if (!Array.isArray(body.contents) || body.contents.length === 0) throw new RelayInputError('contents must be a non-empty list', 'contents');
  if (body.cachedContent != null) throw new RelayInputError('cachedContent is not supported: this gateway keeps no cached contents', 'cachedContent');
  const messages: ChatMessage[] = [];
  const system = listOf(objectOf(body.systemInstruction).parts).map((p) => stringOf(p.text)).filter(Boolean).join('\n');
  if (system) messages.push({ role: 'system', content: system });
  const ids = new CallIds();
  for (const content of listOf(body.contents)) messages.push(...contentMessages(content, ids));
  if (messages.every((m) => m.role === 'system')) throw new RelayInputError('the contents hold no text, media or function parts', 'contents');
  const chat: ChatBody = { model, messages };
  const tools = chatTools(body.tools);
  if (tools.length) {
    chat.tools = tools;
    const choice = chatToolChoice(body.toolConfig);
    if (choice !== undefined) chat.tool_choice = choice;
  }
  applyGenerationConfig(chat, objectOf(body.generationConfig));
  if (stream) {
    chat.stream = true;
    chat.stream_options = { include_usage: true };
  }
  return chat;
}

