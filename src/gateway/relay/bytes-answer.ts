import type { RelayAnswer, RelaySummary } from '../../contract/relay.js';
import type { UpstreamClient } from '../../kit/upstream/client.js';
import type { UpstreamCall } from '../providers/types.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { asFailure, openBytes, sendWhole, type AttemptFailure, type Limits } from './attempt.js';
import type { Plan } from './plan.js';
import type { UsageCheck } from './usage.js';

/** How an answer in bytes ends: its status, code, usage and staff's words, logged; answers the summary. */
export type Finish = (status: number, errorCode: string | null, usage: UsageCheck, firstByteMs: number, detail?: string | null) => RelaySummary;

export interface BytesAttempt {
  upstream: UpstreamClient;
  limits: Limits;
  plan: Plan;
  request: UpstreamCall;
  target: UpstreamTarget;
  startedAt: number;
  /** The attempt served: the channel's try is recorded. */
  served(): void;
  finish: Finish;
  /** An exception of the relay's own, for staff. */
  internalError(f: AttemptFailure): void;
}

/**
 * An answer that is no JSON of the relay's (see CallerFormat.bytes), passed through in the upstream's bytes
 * and content type: read whole and billed by what it holds (a transcription), or passed on as it comes
 * (audio) and billed by the request. Failures before the first byte are thrown (the next channel is tried);
 * after it, the bytes end early (the caller sees a cut answer) and the call is logged as interrupted.
 */
export async function bytesAnswer(a: BytesAttempt): Promise<RelayAnswer> {
  const { plan, request, target, limits } = a;
  const format = plan.format.bytes!;
  const signal = plan.call.signal;
  const elapsed = () => Math.round(performance.now() - a.startedAt);
  if (!format.streamed) {
    const whole = await sendWhole(a.upstream, request, target, limits, signal);
    const read = format.read(whole.text, whole.contentType);
    const usage = plan.checkUsage(read.usage, () => read.text);
    a.served();
    const summary = a.finish(200, null, usage, elapsed());
    const body = Buffer.from(whole.text);
    return { kind: 'bytes', status: 200, contentType: whole.contentType, chunks: (async function* () { yield body; })(), summary: Promise.resolve(summary) };
  }

  const open = await openBytes(a.upstream, request, target, limits, signal);
  a.served();
  const firstByteMs = elapsed();
  const usage = plan.checkUsage(null, () => '');
  let settle!: (s: RelaySummary) => void;
  const summary = new Promise<RelaySummary>((resolve) => (settle = resolve));
  const finish = (status: number, code: string | null, detail: string | null = null) => settle(a.finish(status, code, usage, firstByteMs, detail));
  async function* chunks(): AsyncGenerator<Uint8Array> {
    let ended = false;
    try {
      yield open.first;
      for (;;) {
        const next = await open.rest.next();
        if (next.done) break;
        yield next.value;
      }
      ended = true;
      finish(200, null);
    } catch (e) {
      ended = true;
      if (signal?.aborted) {
        finish(499, 'client_closed');
        return;
      }
      const failure = asFailure(e, target);
      if (failure.kind === 'internal') a.internalError(failure);
      finish(failure.kind === 'internal' ? 500 : 502, failure.kind === 'internal' ? failure.code : 'relay_stream_interrupted', `${failure.code}: ${failure.detail}`);
      throw new Error('the upstream answer broke off');
    } finally {
      open.stream.close();
      // The consumer stopped pulling (the caller went away): the call ends here.
      if (!ended) finish(499, 'client_closed');
    }
  }
  return { kind: 'bytes', status: 200, contentType: open.contentType, chunks: chunks(), summary };
}
