// One streamed chat call to the edge with the customer's own key (OpenAI Chat Completions, server-sent
// events): the text arrives piece by piece through `onText`; the answer's usage comes at the end.
import { edgeUrl } from '../format';

export interface ChatMessage {
  role: 'user' | 'assistant' | 'system';
  content: string;
}

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
}

/** A refusal of the edge: its message and its code (the OpenAI-style error body). */
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

export async function streamChat(opts: { key: string; model: string; messages: ChatMessage[]; signal: AbortSignal; onText: (text: string) => void }): Promise<ChatUsage | null> {
  const res = await fetch(`${edgeUrl}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${opts.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: opts.model, messages: opts.messages, stream: true, stream_options: { include_usage: true } }),
    signal: opts.signal,
    credentials: 'omit',
  });
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
