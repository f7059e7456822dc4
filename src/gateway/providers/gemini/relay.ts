import { isObject } from '../../../kit/json/object.js';
import type { UpstreamTarget } from '../../upstream/target.js';
import { contentText, unixNow, usageCount, type ChatBody, type ChatCompletion, type ChatMessage, type EmbeddingsBody, type EmbeddingsResult, type Json, type ToolCall } from '../pivot.js';
import { UpstreamPayloadError, type ProviderRelay, type UpstreamCall, UnsupportedByChannel } from '../types.js';
import { countTokensCall, generateContentCall, jsonHeaders } from './api.js';
import {
  candidatesOf,
  finishReasonOf,
  geminiPayload,
  geminiStreamDecoder,
  randomId,
  readParts,
  usageOf,
  type GeminiResponse,
  type GeminiUsageMetadata,
} from './stream.js';

/** Gemini (Generative Language API v1beta): generateContent, streamGenerateContent?alt=sse, batchEmbedContents. */

interface GeminiContent {
  role: 'user' | 'model';
  parts: Json[];
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

const MIME_BY_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
  pdf: 'application/pdf',
  mp3: 'audio/mp3',
  wav: 'audio/wav',
  mp4: 'video/mp4',
};

function mimeTypeOfUrl(url: string): string {
  const path = url.split(/[?#]/)[0];
  const extension = /\.([a-z0-9]+)$/i.exec(path)?.[1]?.toLowerCase() ?? '';
  return MIME_BY_EXTENSION[extension] ?? 'image/jpeg';
}

const BASE64_DATA_URL = /^data:([^;,]*)(?:;[^;,]*)*;base64,(.*)$/s;

/** A data: URL is sent inline; any other URL is left for Gemini to fetch. */
function mediaPart(url: string): Json {
  const data = BASE64_DATA_URL.exec(url);
  if (data) return { inlineData: { mimeType: data[1] || 'image/jpeg', data: data[2] } };
  return { fileData: { fileUri: url, mimeType: mimeTypeOfUrl(url) } };
}

function contentPart(part: Json): Json | null {
  if (part.type === 'text' || part.type === 'input_text' || part.type === 'output_text') {
    return part.text ? { text: String(part.text) } : null;
  }
  if (part.type === 'image_url') {
    const url = isObject(part.image_url) ? part.image_url.url : part.image_url;
    return typeof url === 'string' && url ? mediaPart(url) : null;
  }
  if (part.type === 'input_audio' && isObject(part.input_audio)) {
    return { inlineData: { mimeType: `audio/${String(part.input_audio.format ?? 'wav')}`, data: String(part.input_audio.data ?? '') } };
  }
  return null;
}

function contentParts(content: ChatMessage['content']): Json[] {
  if (typeof content === 'string') return content ? [{ text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.map(contentPart).filter((part): part is Json => part !== null);
}

function functionCallPart(call: ToolCall): Json {
  const args = parseJson(call.function.arguments);
  return { functionCall: { name: call.function.name, args: isObject(args) ? args : {} } };
}

/** Gemini names the function a result belongs to; OpenAI only gives the id of the call, so the name comes from that call. */
function functionResponsePart(message: ChatMessage, callNames: Map<string, string>): Json {
  const text = contentText(message.content);
  const parsed = parseJson(text);
  const name = callNames.get(message.tool_call_id ?? '') ?? message.name ?? '';
  return { functionResponse: { name, response: { content: parsed === undefined ? text : parsed } } };
}

/** Chat messages as Gemini contents; Gemini wants user and model turns, so consecutive same-role messages are merged. */
function contentsOf(messages: ChatMessage[]): GeminiContent[] {
  const callNames = new Map<string, string>();
  const contents: GeminiContent[] = [];
  for (const message of messages) {
    if (message.role === 'system' || message.role === 'developer') continue;
    const calls = message.role === 'assistant' ? (message.tool_calls ?? []) : [];
    for (const call of calls) callNames.set(call.id, call.function.name);
    const parts =
      message.role === 'tool'
        ? [functionResponsePart(message, callNames)]
        : [...contentParts(message.content), ...calls.map(functionCallPart)];
    if (parts.length === 0) continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const last = contents.at(-1);
    if (last?.role === role) last.parts.push(...parts);
    else contents.push({ role, parts });
  }
  return contents;
}

/** The keys of Gemini's Schema (an OpenAPI 3.0 subset): it answers 400 to any other key, `additionalProperties` and `$schema` included. */
const SCHEMA_KEYS = new Set([
  'type', 'format', 'title', 'description', 'nullable', 'enum', 'items', 'minItems', 'maxItems', 'properties', 'required',
  'minProperties', 'maxProperties', 'minLength', 'maxLength', 'pattern', 'minimum', 'maximum', 'anyOf', 'propertyOrdering', 'default', 'example',
]);

/** Gemini answers 400 to any other `format` (`uri`, `email`, …). */
const SCHEMA_FORMATS = new Set(['enum', 'date-time', 'int32', 'int64', 'float', 'double']);

/** A JSON Schema cut down to what Gemini accepts; `type: [T, 'null']` becomes `type: T, nullable: true`. */
function geminiSchema(schema: unknown): unknown {
  if (!isObject(schema)) return schema;
  const out: Json = {};
  for (const [key, value] of Object.entries(schema)) {
    if (!SCHEMA_KEYS.has(key) || (key === 'format' && !SCHEMA_FORMATS.has(String(value)))) continue;
    if (key === 'type' && Array.isArray(value)) {
      const types = value.filter((t) => t !== 'null');
      out.type = types[0];
      if (types.length < value.length) out.nullable = true;
    } else if (key === 'properties' && isObject(value)) {
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, geminiSchema(property)]));
    } else if (key === 'items') {
      out.items = geminiSchema(value);
    } else if (key === 'anyOf' && Array.isArray(value)) {
      out.anyOf = value.map(geminiSchema);
    } else {
      out[key] = value;
    }
  }
  return out;
}

function functionDeclarations(tools: unknown): Json[] {
  if (!Array.isArray(tools)) return [];
  return tools.flatMap((tool) => {
    if (!isObject(tool) || tool.type !== 'function' || !isObject(tool.function)) return [];
    const fn = tool.function;
    const declaration: Json = { name: String(fn.name ?? '') };
    if (typeof fn.description === 'string' && fn.description) declaration.description = fn.description;
    // A function without arguments goes without parameters: Gemini refuses an object schema with no properties.
    const parameters = fn.parameters;
    if (isObject(parameters) && isObject(parameters.properties) && Object.keys(parameters.properties).length > 0) {
      declaration.parameters = geminiSchema(parameters);
    }
    return [declaration];
  });
}

const CALLING_MODES: Record<string, string> = { none: 'NONE', auto: 'AUTO', required: 'ANY' };

function toolConfigOf(choice: unknown): Json | undefined {
  if (typeof choice === 'string' && CALLING_MODES[choice]) return { functionCallingConfig: { mode: CALLING_MODES[choice] } };
  if (isObject(choice) && isObject(choice.function) && typeof choice.function.name === 'string') {
    return { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
  }
  return undefined;
}

/** Chat fields copied as they are into generationConfig; max_completion_tokens comes last so it wins over max_tokens. */
const GENERATION_FIELDS: [chat: string, gemini: string][] = [
  ['temperature', 'temperature'],
  ['top_p', 'topP'],
  ['top_k', 'topK'],
  ['max_tokens', 'maxOutputTokens'],
  ['max_completion_tokens', 'maxOutputTokens'],
  ['n', 'candidateCount'],
  ['seed', 'seed'],
  ['presence_penalty', 'presencePenalty'],
  ['frequency_penalty', 'frequencyPenalty'],
];

const THINKING_BUDGETS: Record<string, number> = { low: 1024, medium: 8192, high: 24576 };

function generationConfig(body: ChatBody): Json {
  const config: Json = {};
  for (const [chat, gemini] of GENERATION_FIELDS) if (body[chat] !== undefined && body[chat] !== null) config[gemini] = body[chat];
  if (typeof body.stop === 'string') config.stopSequences = [body.stop];
  else if (Array.isArray(body.stop) && body.stop.length > 0) config.stopSequences = body.stop;
  const format = isObject(body.response_format) ? body.response_format : {};
  if (format.type === 'json_object' || format.type === 'json_schema') config.responseMimeType = 'application/json';
  if (format.type === 'json_schema' && isObject(format.json_schema) && isObject(format.json_schema.schema)) {
    config.responseSchema = geminiSchema(format.json_schema.schema);
  }
  const budget = THINKING_BUDGETS[String(body.reasoning_effort)];
  if (budget) config.thinkingConfig = { thinkingBudget: budget, includeThoughts: true };
  return config;
}

function generateContentBody(body: ChatBody): Json {
  const out: Json = { contents: contentsOf(body.messages) };
  const system = body.messages.filter((m) => m.role === 'system' || m.role === 'developer').map((m) => contentText(m.content));
  if (system.some(Boolean)) out.systemInstruction = { parts: system.filter(Boolean).map((text) => ({ text })) };
  const declarations = functionDeclarations(body.tools);
  if (declarations.length > 0) out.tools = [{ functionDeclarations: declarations }];
  const toolConfig = toolConfigOf(body.tool_choice);
  if (toolConfig) out.toolConfig = toolConfig;
  const config = generationConfig(body);
  if (Object.keys(config).length > 0) out.generationConfig = config;
  return out;
}

function chatResult(json: unknown, model: string): ChatCompletion {
  const response = geminiPayload(json) as GeminiResponse;
  const choices = candidatesOf(response).map((candidate, position) => {
    const { text, reasoning, toolCalls } = readParts(candidate.content?.parts);
    const message: ChatCompletion['choices'][number]['message'] = { role: 'assistant', content: text || (toolCalls.length > 0 ? null : '') };
    if (reasoning) message.reasoning_content = reasoning;
    if (toolCalls.length > 0) message.tool_calls = toolCalls;
    return { index: candidate.index ?? position, message, finish_reason: finishReasonOf(candidate.finishReason ?? 'STOP', toolCalls.length > 0) };
  });
  const completion: ChatCompletion = { id: response.responseId || randomId('chatcmpl-'), object: 'chat.completion', created: unixNow(), model, choices };
  if (response.usageMetadata) completion.usage = usageOf(response.usageMetadata);
  return completion;
}

function embeddings(t: UpstreamTarget, body: EmbeddingsBody): UpstreamCall {
  const inputs = typeof body.input === 'string' ? [body.input] : body.input;
  if (!inputs.every((input): input is string => typeof input === 'string')) {
    throw new UnsupportedByChannel('token arrays are not supported by this upstream');
  }
  const dimensions = typeof body.dimensions === 'number' ? { outputDimensionality: body.dimensions } : {};
  return {
    url: `${t.baseUrl}/v1beta/models/${encodeURIComponent(body.model)}:batchEmbedContents`,
    headers: jsonHeaders(t),
    body: { requests: inputs.map((text) => ({ model: `models/${body.model}`, content: { parts: [{ text }] }, ...dimensions })) },
  };
}

function embeddingsResult(json: unknown, model: string): EmbeddingsResult {
  const response = geminiPayload(json) as { embeddings?: unknown; usageMetadata?: GeminiUsageMetadata };
  if (!Array.isArray(response.embeddings)) throw new UpstreamPayloadError('the Gemini answer has no embeddings');
  const data = response.embeddings.map((embedding: { values?: number[] }, index) => ({
    object: 'embedding' as const,
    index,
    embedding: embedding?.values ?? [],
  }));
  const tokens = usageCount(response.usageMetadata?.promptTokenCount);
  return { object: 'list', data, model, usage: { prompt_tokens: tokens, total_tokens: tokens } };
}

/** Gemini callers' requests go to generateContent as they are. */
export const geminiRelay: ProviderRelay = {
  chat: (t, body, stream) => generateContentCall(t, body.model, generateContentBody(body), stream),
  chatResult,
  chatStream: geminiStreamDecoder,
  embeddings,
  embeddingsResult,
  native: { gemini: (t, body, model, stream) => generateContentCall(t, model, body, stream) },
  countTokens: { gemini: (t, body, model) => countTokensCall(t, model, countBody(body, model)) },
};

/** A countTokens body whose generateContentRequest names its model (`models/…`): the name sent upstream. */
function countBody(body: Json, model: string): Json {
  return isObject(body.generateContentRequest) ? { ...body, generateContentRequest: { ...body.generateContentRequest, model: `models/${model}` } } : body;
}
