import type { RelayPort, RelaySummary } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import type { EdgeModelTable, EdgeRunTable } from '../db.js';

/** The relay caller of an owner's calls (the gateway's relay log names it `edge:owner-<id>`). */
export function callerOf(ownerId: number, model: Pick<EdgeModelTable, 'group_name'>) {
  return { issuer: 'edge', subject: `owner-${ownerId}`, group: model.group_name };
}

export function gatewayModelOf(model: Pick<EdgeModelTable, 'gateway_model' | 'public_model_id'>): string {
  return model.gateway_model ?? model.public_model_id;
}

/** The text of a Responses answer's message items. */
export function outputText(response: unknown): string {
  const output = (response as { output?: { type?: string; content?: { type?: string; text?: unknown }[] }[] })?.output ?? [];
  return output
    .filter((o) => o.type === 'message')
    .flatMap((o) => o.content ?? [])
    .map((p) => (typeof p.text === 'string' ? p.text : ''))
    .join('');
}

/** A relay summary (or a refusal's) as a run outcome's cost and tokens. */
export function costOf(summary: RelaySummary | null | undefined) {
  return { cost: summary?.quota ?? 0, promptTokens: summary?.usage.prompt_tokens ?? 0, completionTokens: summary?.usage.completion_tokens ?? 0 };
}

/** The relay's summary a failure carries (in-process refusals have one; some over HTTP do not). */
export function failureSummary(e: unknown): RelaySummary | null {
  return e instanceof AppError ? ((e.options.data as { summary?: RelaySummary | null } | undefined)?.summary ?? null) : null;
}

export function failureOf(e: unknown): { code: string; message: string } {
  if (e instanceof AppError) return { code: e.code, message: String(e.options.params?.detail ?? e.code) };
  return { code: 'relay_unreachable', message: (e as Error)?.message ?? String(e) };
}

/** An admitted run's request to the relay: its input as a Responses request to the run's gateway model. */
export function runRequest(model: EdgeModelTable, input: string) {
  return { format: 'responses' as const, body: { model: gatewayModelOf(model), input } };
}

/** Executes an admitted run (within what it holds, and the model's overdraft). */
export async function executeRun(relay: RelayPort, run: EdgeRunTable, model: EdgeModelTable, signal: AbortSignal) {
  const answer = await relay.relay({
    ...runRequest(model, run.input),
    caller: callerOf(Number(run.owner_id), model),
    requestId: run.run_id,
    signal,
    budget: Number(run.reserved_amount) + Number(model.overdraft),
  });
  if (answer.kind !== 'json') throw new Error('an admitted run is answered whole');
  return { output: outputText(JSON.parse(answer.body)), summary: answer.summary };
}
