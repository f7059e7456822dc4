import type { RelayUsage } from '../../contract/relay.js';
import type { ChatCompletion, ChatUsage, Json } from '../providers/pivot.js';
import type { ProviderRelay } from '../providers/types.js';
import { billedUsage, showChatUsage } from './formats/shown-usage.js';
import type { WholeAnswer } from './formats/types.js';
import type { Plan } from './plan.js';
import type { UsageCheck } from './usage.js';

/**
 * A non-streamed answer in the caller's format, with its usage; `text` and `json` are the upstream's answer.
 * An answer passed through goes out as the upstream wrote it, unless the relay replaced its usage: then it
 * shows the billed usage instead (see shown-usage.ts).
 */
export function wholeAnswer(plan: Plan, provider: ProviderRelay, upstreamModel: string, text: string, json: unknown): WholeAnswer {
  const { call, format } = plan;
  const native = plan.native(provider);
  /** The upstream's own answer, as it came or with the billed usage. */
  const passed = (usage: UsageCheck) => {
    const billed = billedUsage(usage);
    if (!billed) return text;
    format.showUsage(json as Json, billed);
    return JSON.stringify(json);
  };
  if (format.answer) return format.answer({ provider, native, upstreamModel, json, request: call.body, usage: (u, completion) => usageOf(u, plan, () => completion), passed });
  if (native && format.nativeAnswer) {
    const answer = format.nativeAnswer(json);
    const usage = usageOf(answer.usage, plan, () => answer.text);
    return { body: passed(usage), usage };
  }
  const completion = provider.chatResult(json, upstreamModel);
  const usage = usageOf(completion.usage ?? null, plan, () => completionText(completion));
  if (native) return { body: passed(usage), usage };
  const billed = billedUsage(usage);
  if (billed) showChatUsage(completion, billed);
  return { body: JSON.stringify(format.fromChat ? format.fromChat(completion, call.body) : completion), usage };
}

export function zeroUsage(): RelayUsage {
  return { prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, reasoning_tokens: 0, total_tokens: 0, counted: false };
}

/**
 * The upstream's usage where it can be right, else counted: the prompt from the request, the completion
 * from the text (see checkedUsage), which is only read when it is counted.
 */
export function usageOf(u: ChatUsage | null, plan: Plan, completionText: () => string): UsageCheck {
  return plan.checkUsage(u, completionText);
}

function completionText(c: ChatCompletion): string {
  return c.choices.map((ch) => `${typeof ch.message.content === 'string' ? ch.message.content : ''}${(ch.message.reasoning_content as string | undefined) ?? ''}${(ch.message.tool_calls ?? []).map((t) => t.function.name + t.function.arguments).join('')}`).join('');
}
