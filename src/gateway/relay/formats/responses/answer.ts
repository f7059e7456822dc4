import { randomBytes } from 'node:crypto';
import { objectOf, stringOf } from '../../../../kit/json/object.js';
import { chatUsage, contentText, usageCount, unixNow, type ChatCompletion, type ChatUsage, type FinishReason, type Json } from '../../../providers/pivot.js';
import { merge } from '../shown-usage.js';

/**
 * The Responses API's objects: a chat completion as a `response` (its output items, which the stream
 * encoder sends one by one too), and the usage of a `response`, in chat terms and back.
 */

export type IdPrefix = 'resp' | 'msg' | 'rs' | 'fc' | 'call';
/** Makes the ids of responses and output items; tests pass a predictable one. */
export type IdSource = (prefix: IdPrefix) => string;
export const randomIds: IdSource = (prefix) => `${prefix}_${randomBytes(24).toString('hex')}`;

export type ItemStatus = 'in_progress' | 'completed' | 'incomplete';

export const outputText = (text: string): Json => ({ type: 'output_text', text, annotations: [] });

export function messageItem(id: string, status: ItemStatus, text: string): Json {
  return { type: 'message', id, status, role: 'assistant', content: text ? [outputText(text)] : [] };
}

export function reasoningItem(id: string, summary: string): Json {
  return { type: 'reasoning', id, summary: summary ? [{ type: 'summary_text', text: summary }] : [] };
}

export function functionCallItem(id: string, status: ItemStatus, callId: string, name: string, args: string): Json {
  return { type: 'function_call', id, call_id: callId, name, arguments: args, status };
}

/** The `incomplete_details.reason` a chat finish reason stands for, or null when the answer is complete. */
export function incompleteReason(finish: FinishReason | undefined): string | null {
  if (finish === 'length') return 'max_output_tokens';
  if (finish === 'content_filter') return 'content_filter';
  return null;
}

/** `resp_` and the upstream's id without its chat prefix, so the same answer keeps a recognisable id. */
export function responseId(completionId: unknown, ids: IdSource): string {
  return typeof completionId === 'string' && completionId ? `resp_${completionId.replace(/^chatcmpl-/, '')}` : ids('resp');
}

export function responsesUsageOf(u: ChatUsage): Json {
  return {
    input_tokens: u.prompt_tokens,
    input_tokens_details: { cached_tokens: u.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: u.completion_tokens,
    output_tokens_details: { reasoning_tokens: u.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: typeof u.total_tokens === 'number' ? u.total_tokens : u.prompt_tokens + u.completion_tokens,
  };
}

export interface ResponseState {
  id: string;
  createdAt: number;
  model: string;
  status: 'in_progress' | 'completed' | 'incomplete' | 'failed';
  output: Json[];
  usage: ChatUsage | null;
  incompleteReason?: string | null;
  error?: { code: string; message: string } | null;
}

/** A `response` object: the output, and the request's settings echoed with OpenAI's defaults. */
export function responseObject(request: Json, s: ResponseState): Json {
  const reasoning = objectOf(request.reasoning);
  return {
    id: s.id,
    object: 'response',
    created_at: s.createdAt,
    status: s.status,
    error: s.error ?? null,
    incomplete_details: s.incompleteReason ? { reason: s.incompleteReason } : null,
    instructions: request.instructions ?? null,
    max_output_tokens: request.max_output_tokens ?? null,
    model: s.model,
    output: s.output,
    parallel_tool_calls: request.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: reasoning.effort ?? null, summary: reasoning.summary ?? null },
    store: request.store ?? true,
    temperature: request.temperature ?? 1,
    text: { format: { type: 'text' }, ...objectOf(request.text) },
    tool_choice: request.tool_choice ?? 'auto',
    tools: request.tools ?? [],
    top_p: request.top_p ?? 1,
    truncation: request.truncation ?? 'disabled',
    usage: s.usage ? responsesUsageOf(s.usage) : null,
    user: request.user ?? null,
    metadata: request.metadata ?? {},
  };
}

export function chatToResponse(c: ChatCompletion, request: Json, ids: IdSource = randomIds): Json {
  const choice = c.choices?.[0];
  const message = choice?.message;
  const reason = incompleteReason(choice?.finish_reason);
  const itemStatus: ItemStatus = reason ? 'incomplete' : 'completed';
  const output: Json[] = [];
  const reasoning = stringOf(message?.reasoning_content);
  if (reasoning) output.push(reasoningItem(ids('rs'), reasoning));
  const text = contentText(message?.content);
  if (text) output.push(messageItem(ids('msg'), itemStatus, text));
  for (const call of message?.tool_calls ?? []) {
    output.push(functionCallItem(ids('fc'), itemStatus, call.id || ids('call'), call.function?.name ?? '', call.function?.arguments ?? ''));
  }
  return responseObject(request, {
    id: responseId(c.id, ids),
    createdAt: typeof c.created === 'number' ? c.created : unixNow(),
    model: c.model,
    status: reason ? 'incomplete' : 'completed',
    output,
    usage: c.usage ?? null,
    incompleteReason: reason,
  });
}

// ---- usage of native Responses answers (pass-through to OpenAI and Azure channels) ----

export function responsesUsage(response: unknown): ChatUsage | null {
  const usage = objectOf(objectOf(response).usage);
  if (usage.input_tokens === undefined && usage.output_tokens === undefined) return null;
  const cached = usageCount(objectOf(usage.input_tokens_details).cached_tokens);
  const reasoning = usageCount(objectOf(usage.output_tokens_details).reasoning_tokens);
  return chatUsage(usageCount(usage.input_tokens), usageCount(usage.output_tokens), cached, reasoning);
}

/** The usage in a stream event's data; only the final events (completed, incomplete) carry it. */
export function responsesStreamUsage(eventData: unknown): ChatUsage | null {
  const data = objectOf(eventData);
  if (data.type !== 'response.completed' && data.type !== 'response.incomplete') return null;
  return responsesUsage(data.response);
}

/** A `response` object's usage with the billed counts (see shown-usage.ts). */
export function showResponsesUsage(response: Json, u: ChatUsage): void {
  merge(response, 'usage', responsesUsageOf(u));
}
