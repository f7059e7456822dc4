import { errorCatalog } from '../../contract/errors/index.js';
import { AppError, renderMessage } from '../../kit/http/errors.js';
import { scrubSecrets } from '../../kit/upstream/scrub.js';
import { audit, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import { validateLists } from '../channels/validate.js';
import type { GatewayContext } from '../context.js';
import { nowSeconds } from '../db.js';
import type { JobRun, JobService } from '../jobs/service.js';
import type { ModelService } from './service.js';
import { applySelection, mappingOf, merge, modelsOf, pendingChanges, readSettings, settingsText, usableUpstream, type Selection } from './update-rules.js';
import { candidatePage, countCandidates } from './updates-store.js';

export const JOB_TYPE = 'model_update';
/** Channels read per page by G38 and G40 (id order). */
const PAGE = 100;
/** Channels G38 changes (or fails on) per request; the answer says where to go on from. */
const APPLY_ALL_LIMIT = 500;
/** Per-channel entries kept in a G40 result (the counts cover every channel). */
const RESULT_ENTRIES = 1000;
const SCHEDULE_ACTOR: Actor = { id: 0, name: 'system:model_update' };

export interface DetectResult {
  channel_id: number;
  channel_name: string;
  add_models: string[];
  remove_models: string[];
  last_check_time: number;
  auto_added_models: number;
}

export interface ChannelFailure {
  channel_id: number;
  channel_name: string;
  code: string;
  message: string;
}

/** Runs `fn` over `items` with at most `limit` running at once. */
async function eachLimited<T>(items: T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

/**
 * Upstream model updates (G37–G40): detection compares a channel's models with its upstream's list and
 * stages the differences in its settings; apply moves staged models into the channel.
 */
export class UpstreamUpdateService {
  private timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
    private readonly models: ModelService,
    private readonly jobs: JobService,
  ) {}

  private get config() {
    return this.ctx.config.gateway.modelUpdate;
  }

  /** G39: checks one channel now (opted in or not, any status); upstream failures answer as G17's do. */
  detect(actor: Actor, id: number): Promise<DetectResult> {
    return this.check(actor, 'G39', id, true);
  }

  /**
   * Lists the upstream (outside any transaction), then stages the differences against the channel as it is
   * stored then, under its row lock. Auto-sync channels take the new models at once. A failed list still
   * records the check time (so scheduled runs keep their interval) and is thrown.
   */
  private async check(actor: Actor, operation: string, id: number, auditAlways: boolean): Promise<DetectResult> {
    let upstream: string[] | null = null;
    let failure: AppError | null = null;
    let secrets: string[] = [];
    try {
      const t = await this.channels.target(id);
      secrets = t.secrets;
      if (!t.baseUrl) throw new AppError('CHANNEL_INVALID', { params: { detail: 'the channel has no base_url and its type has no default' } });
      upstream = usableUpstream(await this.models.list(t));
    } catch (e) {
      if (!(e instanceof AppError) || e.code === 'CHANNEL_NOT_FOUND') throw e;
      failure = e;
    }
    const now = nowSeconds();
    const result = await this.channels.rewriteModels(actor, operation, id, (row) => {
      const s = readSettings(row.settings);
      s.lastCheckTime = now;
      const out: DetectResult = { channel_id: id, channel_name: row.name, add_models: s.detected, remove_models: s.removed, last_check_time: now, auto_added_models: 0 };
      if (!upstream) {
        return { models: row.models, settings: settingsText(s), audit: { name: row.name, failed: failure!.code }, result: out };
      }
      const local = modelsOf(row.models);
      const pending = pendingChanges(local, upstream, s.ignored, mappingOf(row.model_mapping));
      let models = row.models;
      s.detected = pending.add;
      s.removed = pending.remove;
      if (s.autoSync && pending.add.length && this.fitsAbilities(merge(local, pending.add), row.group)) {
        models = merge(local, pending.add).join(',');
        out.auto_added_models = pending.add.length;
        s.detected = [];
      }
      const text = settingsText(s);
      const stored = readSettings(text);
      out.add_models = stored.detected;
      out.remove_models = stored.removed;
      const changed = out.auto_added_models > 0;
      const detail = { name: row.name, upstream: upstream.length, add: out.add_models.length, remove: out.remove_models.length, auto_added: out.auto_added_models };
      return { models, settings: text, audit: auditAlways || changed ? detail : null, result: out };
    });
    if (failure) throw scrubbed(failure, secrets);
    return result;
  }

  /** Whether the channel could hold these models (else auto-sync leaves them staged). */
  private fitsAbilities(models: string[], group: string): boolean {
    try {
      validateLists(models.join(','), group);
      return true;
    } catch {
      return false;
    }
  }

  /** G37: applies the chosen staged changes to one channel. */
  async apply(actor: Actor, id: number, pick: Selection) {
    return this.channels.rewriteModels(actor, 'G37', id, (row) => {
      const s = readSettings(row.settings);
      const local = modelsOf(row.models);
      const r = applySelection(local, s, pick);
      const changed = r.added.length > 0 || r.removed.length > 0;
      const models = changed ? r.models.join(',') : row.models;
      const settings = settingsText(r.settings);
      const result = {
        id,
        added_models: r.added,
        removed_models: r.removed,
        ignored_models: r.ignored,
        remaining_models: r.settings.detected,
        remaining_remove_models: r.settings.removed,
        models,
        settings,
      };
      return { models, settings, audit: { name: row.name, added: r.added.length, removed: r.removed.length, ignored: r.ignored.length }, result };
    });
  }

  /**
   * G38: applies every staged change of enabled opted-in channels, one transaction per channel, in id order
   * after `afterId`. At most APPLY_ALL_LIMIT channels per request: `more` says whether to call again with
   * `after_id = last_id`.
   */
  async applyAll(actor: Actor, afterId: number) {
    const results: Record<string, unknown>[] = [];
    const failed: number[] = [];
    const failures: ChannelFailure[] = [];
    let added = 0;
    let removed = 0;
    let cursor = afterId;
    let more = false;
    outer: for (;;) {
      const page = await candidatePage(this.ctx.db, cursor, PAGE);
      for (const c of page) {
        if (results.length + failed.length >= APPLY_ALL_LIMIT) {
          more = true;
          break outer;
        }
        cursor = c.id;
        const s = readSettings(c.settings);
        if (!s.checkEnabled || (!s.detected.length && !s.removed.length)) continue;
        try {
          const r = await this.apply(actor, c.id, { add_models: s.detected, remove_models: s.removed, ignore_models: [] });
          added += r.added_models.length;
          removed += r.removed_models.length;
          results.push({ channel_id: c.id, channel_name: c.name, added_models: r.added_models, removed_models: r.removed_models, remaining_models: r.remaining_models, remaining_remove_models: r.remaining_remove_models });
        } catch (e) {
          failed.push(c.id);
          failures.push(this.failureOf(c, e));
        }
      }
      if (page.length < PAGE) break;
    }
    await audit(this.ctx.db, actor, 'G38', null, { count: results.length, added, removed, failed_ids: failed.slice(0, 100), more });
    return { count: results.length, processed_channels: results.length, added_models: added, removed_models: removed, failed_channel_ids: failed, failures, results, more, last_id: cursor };
  }

  /** G40: starts the detection of every enabled opted-in channel as a background job (409 while one runs). */
  detectAll(actor: Actor, force: boolean) {
    return this.jobs.start(actor, 'G40', JOB_TYPE, { force, trigger: 'manual' }, (run) => this.runAll(actor, run, force));
  }

  private async runAll(actor: Actor, run: JobRun, force: boolean) {
    const total = await countCandidates(this.ctx.db);
    const progress = { total, done: 0, failed: 0, skipped: 0 };
    const out = {
      processed_channels: 0,
      skipped_channels: 0,
      failed_channel_ids: [] as number[],
      detected_add_models: 0,
      detected_remove_models: 0,
      auto_added_models: 0,
      channel_detected_results: [] as DetectResult[],
      failures: [] as ChannelFailure[],
      truncated: false,
    };
    let cursor = 0;
    while (!run.signal.aborted) {
      const page = await candidatePage(this.ctx.db, cursor, PAGE);
      if (!page.length) break;
      cursor = page.at(-1)!.id;
      await eachLimited(page, this.config.concurrency, async (c) => {
        if (run.signal.aborted) return;
        const s = readSettings(c.settings);
        if (!s.checkEnabled) {
          // Mentions the field without opting in: counted as done, not checked.
        } else if (!force && s.lastCheckTime > 0 && nowSeconds() - s.lastCheckTime < this.config.minIntervalSeconds) {
          progress.skipped++;
          out.skipped_channels++;
        } else {
          try {
            const r = await this.check(actor, 'G40', c.id, false);
            out.processed_channels++;
            out.detected_add_models += r.add_models.length + r.auto_added_models;
            out.detected_remove_models += r.remove_models.length;
            out.auto_added_models += r.auto_added_models;
            if (out.channel_detected_results.length < RESULT_ENTRIES) out.channel_detected_results.push(r);
            else out.truncated = true;
          } catch (e) {
            progress.failed++;
            out.failed_channel_ids.push(c.id);
            if (out.failures.length < RESULT_ENTRIES) out.failures.push(this.failureOf(c, e));
            else out.truncated = true;
          }
        }
        progress.done++;
        run.progress({ ...progress, total: Math.max(progress.total, progress.done) });
      });
    }
    out.failed_channel_ids.sort((a, b) => a - b);
    run.progress({ ...progress, total: Math.max(progress.total, progress.done) });
    await audit(this.ctx.db, actor, 'G40', null, {
      task_id: run.taskId,
      force,
      processed: out.processed_channels,
      skipped: out.skipped_channels,
      failed_ids: out.failed_channel_ids.slice(0, 100),
      add: out.detected_add_models,
      remove: out.detected_remove_models,
      auto_added: out.auto_added_models,
    });
    return out;
  }

  /** A per-channel failure for a result: its code and English message (upstream text scrubbed by check()). */
  private failureOf(c: { id: number; name: string }, e: unknown): ChannelFailure {
    if (e instanceof AppError) {
      const def = errorCatalog[e.code];
      const message = def ? renderMessage(def, 'en', e.options.params) : e.code;
      return { channel_id: c.id, channel_name: c.name, code: e.code, message };
    }
    this.ctx.log.error({ err: e, channel_id: c.id }, 'upstream model update failed');
    return { channel_id: c.id, channel_name: c.name, code: 'INTERNAL_ERROR', message: 'internal error' };
  }

  /** Starts the periodic detection (GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES; 0 = off). */
  startSchedule() {
    if (this.config.intervalMinutes <= 0 || this.timer) return;
    this.timer = setInterval(() => void this.tick(), 60_000);
    this.timer.unref();
  }

  stopSchedule() {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /**
   * One scheduled check: starts the job unless one of its type was started within the interval by any
   * instance (so N instances still run it once per interval) or one is running. Not forced: each channel
   * keeps its minimum interval. Returns the started job, or null.
   */
  async tick() {
    if (this.config.intervalMinutes <= 0) return null;
    try {
      const last = await this.jobs.lastStarted(JOB_TYPE);
      if (last !== null && nowSeconds() - last < this.config.intervalMinutes * 60) return null;
      return await this.jobs.start(SCHEDULE_ACTOR, 'G40', JOB_TYPE, { force: false, trigger: 'schedule' }, (run) => this.runAll(SCHEDULE_ACTOR, run, false));
    } catch (e) {
      if (!(e instanceof AppError && e.code === 'JOB_RUNNING')) this.ctx.log.warn({ err: e }, 'scheduled upstream model update did not start');
      return null;
    }
  }
}

/** The failure with the channel's secrets removed from its detail (the providers scrub already; this is the last guard). */
function scrubbed(e: AppError, secrets: string[]): AppError {
  const params = e.options.params;
  if (!params) return e;
  const clean = Object.fromEntries(Object.entries(params).map(([k, v]) => [k, typeof v === 'string' ? scrubSecrets(v, secrets) : v]));
  return new AppError(e.code, { ...e.options, params: clean });
}
