import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import { recordTestTimes, setAutoStatus } from '../channels/auto-status.js';
import type { ChannelService } from '../channels/service.js';
import { CHANNEL_TYPES, parseInfo, STATUS, TYPE_CODEX } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import type { JobRun, JobService } from '../jobs/service.js';
import { providerOf, testable } from '../providers/index.js';
import { ENDPOINT_TYPES, type EndpointType } from '../providers/types.js';
import type { ProbeOutcome } from '../upstream/probe.js';
import type { UpstreamTarget } from '../upstream/target.js';
import { outcomeOfError } from '../metrics.js';
import { judged, shouldDisable } from './rules.js';
import { countCandidates, testCandidates, type Candidate, type TestMode } from './store.js';

const DEFAULT_MODEL = 'gpt-4o-mini';
export const JOB_TYPE = 'channel_test';
const SYSTEM: Actor = { id: 0, name: 'system:channel_test' };

export interface TestQuery {
  model?: string;
  endpoint_type?: string;
  stream?: boolean;
  key_index?: number;
}

export interface TestResult {
  outcome: ProbeOutcome;
  ms: number;
  model: string;
  endpoint: EndpointType;
  stream: boolean;
}

/** What testing one key came to: its failure (null when it passed) and the status change the rules made. */
interface KeyTestOutcome {
  failure: { errorCode: string } | null;
  change: 'disabled' | 'enabled' | null;
}

/** The endpoint a model is tested on: the one asked for, else by the model's name (as the reference). */
function endpointFor(t: UpstreamTarget, model: string, asked: string | undefined): EndpointType {
  const provider = providerOf(t.type);
  if (asked) {
    if (!(ENDPOINT_TYPES as readonly string[]).includes(asked) || !provider.endpoints.includes(asked as EndpointType)) {
      throw new AppError('CHANNEL_TEST_ENDPOINT_UNSUPPORTED', { params: { endpoint: asked, type: CHANNEL_TYPES[t.type]?.name ?? t.type } });
    }
    return asked as EndpointType;
  }
  const byName: EndpointType | null = /embedding|^m3e|bge-|embed/i.test(model) ? 'embeddings' : /codex/i.test(model) ? 'openai-response' : null;
  return byName && provider.endpoints.includes(byName) ? byName : provider.endpoints[0]!;
}

/** Keys of a multi-key channel a test-all run tests: all but those disabled by hand. */
function testableKeys(info: ReturnType<typeof parseInfo>): number[] {
  const out: number[] = [];
  for (let i = 0; i < info.multi_key_size; i++) if ((info.multi_key_status_list[i] ?? STATUS.enabled) !== STATUS.manual) out.push(i);
  return out;
}

/** Connectivity tests of channels: one now (G34), or all as a background job (G33) with the automatic rules. */
export class ChannelTestService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
    private readonly jobs: JobService,
  ) {}

  private get config() {
    return this.ctx.config.gateway.channelTest;
  }

  /** Sends the test request of one target and times it (wall clock around the upstream call). */
  async run(t: UpstreamTarget, q: TestQuery): Promise<TestResult> {
    if (!testable(t.type)) throw new AppError('UPSTREAM_NOT_SUPPORTED', { params: { operation: 'a channel test', type: CHANNEL_TYPES[t.type]?.name ?? t.type } });
    const asked = q.model?.trim() || t.testModel?.trim() || t.models[0] || DEFAULT_MODEL;
    const model = t.modelMapping[asked] ?? asked;
    const endpoint = endpointFor(t, model, q.endpoint_type?.trim() || undefined);
    const stream = !!q.stream;
    const provider = providerOf(t.type);
    const started = performance.now();
    let outcome: ProbeOutcome;
    try {
      outcome = await provider.test(this.ctx, t, { model, endpoint, stream, timeoutMs: this.ctx.config.gateway.upstream.timeoutMs });
    } catch (e) {
      this.ctx.metrics.upstreamCall('test', provider.name, outcomeOfError(e));
      throw e;
    }
    const ms = performance.now() - started;
    this.ctx.metrics.channelTest(provider.name, outcome, ms / 1000);
    return { outcome, ms: Math.round(ms), model, endpoint, stream };
  }

  /** G34: tests one channel (one key); saves its response time on success; never changes its status. */
  async testOne(actor: Actor, id: number, q: TestQuery) {
    const t = await this.channels.target(id, q.key_index);
    const r = await this.run(t, q);
    if (r.outcome.ok) await recordTestTimes(this.ctx, [{ id, ms: r.ms }]);
    await audit(this.ctx.db, actor, 'G34', id, { model: r.model, endpoint_type: r.endpoint, stream: r.stream, ok: r.outcome.ok, ms: r.ms, ...(r.outcome.ok ? {} : { error_code: r.outcome.errorCode }) });
    return { ...r, keyIndex: t.keyIndex };
  }

  /** G33: starts the test-all job (409 JOB_RUNNING while one runs on any instance). */
  startAll(actor: Actor, mode: TestMode) {
    return this.jobs.start(actor, 'G33', JOB_TYPE, { mode }, (run) => this.testAll(run, mode));
  }

  /**
   * Tests every candidate channel, each key of a multi-key channel on its own, CONCURRENCY at a time, paging
   * through ids so no more than a page of channels is held; successes' times are written in batches, the
   * automatic rules apply per channel or key (auto-disabled keys and channels are tested for recovery).
   */
  private async testAll(run: JobRun, mode: TestMode) {
    const progress = { total: await countCandidates(this.ctx.db, mode), done: 0, succeeded: 0, failed: 0, disabled: 0, enabled: 0 };
    run.progress(progress);
    const failures: { channel_id: number; key_index?: number; error_code: string; disabled?: true }[] = [];
    let times: { id: number; ms: number }[] = [];
    const flush = async () => {
      const batch = times;
      times = [];
      await recordTestTimes(this.ctx, batch);
    };
    const testChannel = async (c: Candidate) => {
      const info = parseInfo(c.channel_info);
      const keys = info.is_multi_key ? testableKeys(info) : [undefined];
      let anyOk = false;
      for (const keyIndex of keys) {
        if (run.signal.aborted) return;
        const { failure, change } = await this.testKey(c, keyIndex, mode, (ms) => {
          anyOk = true;
          times.push({ id: c.id, ms });
        });
        if (change === 'disabled') progress.disabled++;
        if (change === 'enabled') progress.enabled++;
        if (failure && failures.length < 1000) {
          failures.push({ channel_id: c.id, ...(keyIndex !== undefined ? { key_index: keyIndex } : {}), error_code: failure.errorCode, ...(change === 'disabled' ? { disabled: true } : {}) });
        }
        if (this.config.intervalMs) await new Promise((r) => setTimeout(r, this.config.intervalMs));
      }
      progress.done++;
      if (anyOk) progress.succeeded++;
      else progress.failed++;
      if (times.length >= 200) await flush();
      run.progress({ ...progress });
    };
    const queue: Candidate[] = [];
    let afterId = 0;
    let exhausted = false;
    const next = async () => {
      if (!queue.length && !exhausted) {
        const page = await testCandidates(this.ctx.db, mode, afterId, 500);
        if (page.length < 500) exhausted = true;
        if (page.length) afterId = page.at(-1)!.id;
        queue.push(...page);
      }
      return queue.shift();
    };
    let pulling: Promise<unknown> = Promise.resolve();
    const worker = async () => {
      for (;;) {
        if (run.signal.aborted) return;
        // One page read at a time: workers take turns at the queue.
        const c = await (pulling = pulling.then(next));
        if (!c) return;
        await testChannel(c as Candidate);
      }
    };
    await Promise.all(Array.from({ length: this.config.concurrency }, worker));
    await flush();
    run.progress({ ...progress });
    return { ...progress, mode, failures };
  }

  /**
   * Tests one key (or the single key) and applies the rules: the failure (whether or not the rules then
   * disabled it) and the status change the rules made, if any.
   */
  private async testKey(c: Candidate, keyIndex: number | undefined, mode: TestMode, onOk: (ms: number) => void): Promise<KeyTestOutcome> {
    let t: UpstreamTarget;
    try {
      t = await this.channels.target(c.id, keyIndex);
    } catch (e) {
      return { failure: { errorCode: e instanceof AppError ? e.code : 'internal' }, change: null };
    }
    let r: TestResult;
    try {
      r = await this.run(t, t.type === TYPE_CODEX ? { stream: true } : {});
    } catch (e) {
      return { failure: { errorCode: e instanceof AppError ? e.code : 'internal' }, change: null };
    }
    const outcome = judged(r.outcome, r.ms, this.config);
    if (outcome.ok) {
      onOk(r.ms);
      const wasAuto = keyIndex !== undefined ? parseInfo(c.channel_info).multi_key_status_list[keyIndex] === STATUS.auto || c.status === STATUS.auto : c.status === STATUS.auto;
      const enabled = wasAuto && this.config.autoEnable && (await setAutoStatus(this.ctx, SYSTEM, 'G33', { channelId: c.id, disable: false, reason: 'test passed', keyIndex }));
      return { failure: null, change: enabled ? 'enabled' : null };
    }
    const failure = { errorCode: outcome.errorCode };
    if (mode !== 'all' || !shouldDisable(outcome, this.config) || c.auto_ban !== 1) return { failure, change: null };
    const disabled = await setAutoStatus(this.ctx, SYSTEM, 'G33', { channelId: c.id, disable: true, reason: `${outcome.errorCode}: ${outcome.message}`.slice(0, 500), keyIndex });
    return { failure, change: disabled ? 'disabled' : null };
  }
}
