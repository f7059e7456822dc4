import type { ChatBody, Json } from '../../../providers/pivot.js';
import { UnsupportedByChannel } from '../../../providers/types.js';

/** OpenAI's default output cap of a legacy completion (its API reference: `max_tokens` defaults to 16). */
export const DEFAULT_COMPLETION_MAX_TOKENS = 16;

/** Passed to chat unchanged: chat reads them the same way. */
const SAME_NAMED_FIELDS = ['temperature', 'top_p', 'n', 'stop', 'presence_penalty', 'frequency_penalty', 'logit_bias', 'seed', 'user', 'stream_options'] as const;

/** The one prompt text of a body, or null when the prompt is a list of several, or tokens. */
export function singlePrompt(prompt: unknown): string | null {
  if (typeof prompt === 'string') return prompt;
  if (Array.isArray(prompt) && prompt.length === 1 && typeof prompt[0] === 'string') return prompt[0];
  return null;
}

function unsupported(what: string): never {
  // Another channel of the model may speak completions: a failure of this channel, not of the call.
  throw new UnsupportedByChannel(`${what} needs a channel that speaks completions`, `${what} is served only by channels that speak completions`);
}

/**
 * A legacy completions request as a chat request (for channels without a completions endpoint): the prompt
 * becomes one user message. What chat cannot carry (several prompts, token prompts, `suffix`, `echo`,
 * `logprobs`, `best_of`) is refused for this channel.
 */
export function completionsToChat(body: Json, model: string): ChatBody {
  const prompt = singlePrompt(body.prompt);
  if (prompt === null) unsupported('a prompt list or a token prompt');
  if (typeof body.suffix === 'string' && body.suffix) unsupported('suffix');
  if (body.echo === true) unsupported('echo');
  if (body.logprobs != null) unsupported('logprobs');
  if (typeof body.best_of === 'number' && body.best_of > 1) unsupported('best_of');
  const chat: ChatBody = { model, messages: [{ role: 'user', content: prompt }] };
  chat.max_tokens = typeof body.max_tokens === 'number' ? body.max_tokens : DEFAULT_COMPLETION_MAX_TOKENS;
  for (const field of SAME_NAMED_FIELDS) if (body[field] != null) chat[field] = body[field];
  if (body.stream === true) chat.stream = true;
  return chat;
}
