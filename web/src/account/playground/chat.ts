// One streamed chat call of the signed-in user (new-api's playground, AP49 `POST /pg/chat/completions`) with
// the session's access token: the account service sends it to the edge and bills the user's wallet. OpenAI
// Chat Completions as server-sent events: the text arrives piece by piece through `onText`; the usage at the end.
import { routes } from '../../generated/account-api';
import { lang } from '../../shared/i18n';
import { bearer, refresh } from '../session';

export interface ChatMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A refusal: its message and its code (the OpenAI-style error body). */
export class ChatError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
  ) {
    super(message);
  }
}

/** The `data:` payloads of complete events in `buffer`, and what is left of it. */
export function takeEvents(buffer: string): { events: string[]; rest: string } {
  const events: string[] = [];
  const blocks = buffer.split(/\r?\n\r?\n/);
  const rest = blocks.pop() ?? '';
  for (const block of blocks) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).replace(/^ /, ''))
      .join('\n');
    if (data) events.push(data);
  }
  return { events, rest };
}

type Options = { model: string; messages: ChatMessage[]; signal: AbortSignal; onText: (text: string) => void };

/** Sends the chat with the session's token; an expired token is renewed once (A24) and the chat sent again. */
async function send(opts: Options, retry = true): Promise<Response> {
  const headers: Record<string, string> = { 'content-type': 'application/json', 'accept-language': lang.value === 'zh' ? 'zh-CN' : 'en' };
  const auth = bearer();
  if (auth) headers.authorization = auth;
  const res = await fetch(routes.AP49[1], {
    method: 'POST',
    headers,
    body: JSON.stringify({ model: opts.model, messages: opts.messages, stream: true, stream_options: { include_usage: true } }),
    signal: opts.signal,
    credentials: 'same-origin',
  });
  if (res.status === 401 && retry && (await refresh())) return send(opts, false);
  return res;
}

export async function streamChat(opts: Options): Promise<ChatUsage | null> {
  const res = await send(opts);
  if (!res.ok || !res.body) {
    const body = await res.json().catch(() => null);
    throw new ChatError(body?.error?.message ?? `HTTP ${res.status}`, body?.error?.code ?? String(res.status), res.status);
  }
  const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let usage: ChatUsage | null = null;
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    const { events, rest } = takeEvents(buffer + value);
    buffer = rest;
    for (const data of events) {
      if (data === '[DONE]') return usage;
      const chunk = JSON.parse(data);
      if (chunk.error) throw new ChatError(chunk.error.message ?? 'error', chunk.error.code ?? 'error', 200);
      const text = chunk.choices?.[0]?.delta?.content;
      if (text) opts.onText(text);
      if (chunk.usage) usage = chunk.usage;
    }
  }
  return usage;
}
