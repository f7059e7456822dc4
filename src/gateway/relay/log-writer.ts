import { sql } from 'kysely';
import type { Logger } from 'pino';
import type { RelayCaller, RelayFormat, RelaySummary } from '../../contract/relay.js';
import type { Database } from '../../kit/db/index.js';
import type { GatewayDB, RelayLogTable } from '../db.js';
import { insertLogRows, pruneLog, type RelayLogRow } from './log-store.js';

/** How a caller is named in the log: `iss:sub`. */
export function callerName(c: Pick<RelayCaller, 'issuer' | 'subject'>): string {
  return `${c.issuer}:${c.subject}`.slice(0, 192);
}

/** A logged call as the summary the caller got. */
export function summaryFromRow(r: Omit<RelayLogTable, 'id'>): RelaySummary {
  return {
    request_id: r.request_id,
    model: r.model,
    upstream_model: r.upstream_model,
    channel_id: r.channel_id === null ? null : Number(r.channel_id),
    key_index: r.key_index,
    status: Number(r.status),
    error_code: r.error_code,
    usage: {
      prompt_tokens: Number(r.prompt_tokens),
      completion_tokens: Number(r.completion_tokens),
      cached_tokens: Number(r.cached_tokens),
      reasoning_tokens: Number(r.reasoning_tokens),
      total_tokens: Number(r.prompt_tokens) + Number(r.completion_tokens),
      counted: Number(r.usage_counted) === 1,
    },
    quota: Number(r.quota),
    cost_usd: Number(r.cost),
    first_byte_ms: r.first_byte_ms === null ? null : Number(r.first_byte_ms),
    total_ms: Number(r.total_ms),
    attempts: JSON.parse(r.attempts),
  };
}

const FLUSH_MS = 500;
const FLUSH_ROWS = 500;
/** Rows held when the database cannot take them; beyond this the oldest are dropped (and counted). */
const MAX_PENDING = 50_000;
const PRUNE_EVERY_MS = 3600_000;
/** Flushes a row the database refuses on its own is tried in (a lock timeout passes; a bad value does not). */
const ROW_TRIES = 3;

/**
 * Writes relay log rows and channels' used quota in batches (one transaction every FLUSH_MS or FLUSH_ROWS
 * rows), so a call never waits for the database; `close` writes what is left. A batch the database refuses
 * while it answers is written row by row; a row it refuses alone is tried again at the next flushes and set
 * aside (logged and counted) after ROW_TRIES: one bad row never holds back the others, and is never retried
 * forever. While the database cannot be reached at all, rows are kept (up to MAX_PENDING).
 */
export class RelayLogWriter {
  private rows: RelayLogRow[] = [];
  private quota = new Map<number, number>();
  private timer: NodeJS.Timeout | null = null;
  private pruner: NodeJS.Timeout | null = null;
  private flushing: Promise<void> = Promise.resolve();
  /** How many flushes each row the database refused on its own has failed. */
  private readonly tries = new WeakMap<RelayLogRow, number>();
  dropped = 0;
  /** Rows the database refused on their own: set aside, not written. */
  rejected = 0;
  /** Sees every recorded call (the relay's metrics, once the app has its registry). */
  observer: ((s: RelaySummary) => void) | null = null;
  /** Told of rows set aside (the relay's metrics). */
  onRejected: ((rows: number) => void) | null = null;

  constructor(
    private readonly database: Database<GatewayDB>,
    private readonly addUsedQuota: (deltas: Map<number, number>) => Promise<void>,
    private readonly log: Logger,
    private readonly retentionDays: number,
  ) {
    if (retentionDays > 0) {
      this.pruner = setInterval(() => void this.prune(), PRUNE_EVERY_MS);
      this.pruner.unref();
    }
  }

  /** Records one call; `errorDetail` is what went wrong in staff's words (kept in the log, never answered). */
  record(s: RelaySummary, call: { caller: RelayCaller; format: RelayFormat; stream: boolean }, errorDetail: string | null = null) {
    this.observer?.(s);
    this.rows.push({
      created_at: Date.now() - s.total_ms,
      request_id: s.request_id.slice(0, 64),
      caller: callerName(call.caller),
      caller_group: call.caller.group.slice(0, 64),
      format: call.format,
      stream: call.stream ? 1 : 0,
      model: s.model.slice(0, 255),
      upstream_model: s.upstream_model.slice(0, 255),
      channel_id: s.channel_id,
      key_index: s.key_index,
      status: s.status,
      error_code: s.error_code,
      prompt_tokens: s.usage.prompt_tokens,
      completion_tokens: s.usage.completion_tokens,
      cached_tokens: s.usage.cached_tokens,
      reasoning_tokens: s.usage.reasoning_tokens,
      quota: s.quota,
      cost: s.cost_usd,
      first_byte_ms: s.first_byte_ms,
      total_ms: s.total_ms,
      retries: Math.max(0, s.attempts.length - 1),
      attempts: JSON.stringify(s.attempts),
      usage_counted: s.usage.counted ? 1 : 0,
      error_detail: errorDetail === null ? null : errorDetail.slice(0, 2000),
    });
    if (s.channel_id !== null && s.quota > 0) this.quota.set(s.channel_id, (this.quota.get(s.channel_id) ?? 0) + s.quota);
    if (this.rows.length > MAX_PENDING) this.dropped += this.rows.splice(0, this.rows.length - MAX_PENDING).length;
    if (this.rows.length >= FLUSH_ROWS) void this.flush();
    else this.later();
  }

  private later() {
    if (this.timer) return;
    this.timer = setTimeout(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  /** Quota recorded for a channel and not yet added to its used_quota. */
  pendingQuota(channelId: number): number {
    return this.quota.get(channelId) ?? 0;
  }

  /** Writes everything recorded so far; resolves when it is stored (or failed and was put back). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(() => this.write());
    return this.flushing;
  }

  private async write() {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    const rows = this.rows;
    const quota = this.quota;
    if (!rows.length && !quota.size) return;
    this.rows = [];
    this.quota = new Map();
    if (rows.length) await this.store(rows);
    try {
      await this.addUsedQuota(quota);
    } catch (e) {
      this.log.error({ err: { message: (e as Error).message } }, 'relay log: used quota not saved, kept for the next flush');
      for (const [id, q] of quota) this.quota.set(id, (this.quota.get(id) ?? 0) + q);
    }
  }

  private async store(rows: RelayLogRow[]) {
    try {
      await this.database.db.transaction().execute((trx) => insertLogRows(trx, rows));
      return;
    } catch (e) {
      if (!(await this.reachable())) {
        this.log.error({ err: { message: (e as Error).message }, rows: rows.length }, 'relay log: write failed, kept for the next flush');
        this.rows = [...rows, ...this.rows];
        return;
      }
    }
    const refused: { row: RelayLogRow; message: string }[] = [];
    for (const row of rows) {
      try {
        await insertLogRows(this.database.db, [row]);
      } catch (e) {
        refused.push({ row, message: (e as Error).message });
      }
    }
    if (!refused.length) return;
    if (refused.length === rows.length && !(await this.reachable())) {
      this.rows = [...rows, ...this.rows];
      return;
    }
    const again: RelayLogRow[] = [];
    for (const { row, message } of refused) {
      const tries = (this.tries.get(row) ?? 0) + 1;
      this.tries.set(row, tries);
      if (tries < ROW_TRIES) {
        again.push(row);
        continue;
      }
      this.rejected++;
      this.onRejected?.(1);
      this.log.error({ err: { message }, requestId: row.request_id, channelId: row.channel_id, model: row.model, quota: String(row.quota), tries }, 'relay log: a row the database refuses was set aside');
    }
    if (again.length) {
      this.rows = [...again, ...this.rows];
      this.later();
    }
  }

  /** Whether the database answers at all (a refused batch is then the rows' fault, not the connection's). */
  private async reachable(): Promise<boolean> {
    try {
      await sql`select 1`.execute(this.database.db);
      return true;
    } catch {
      return false;
    }
  }

  async prune() {
    try {
      const deleted = await pruneLog(this.database.db, Date.now() - this.retentionDays * 86400_000);
      if (deleted) this.log.info({ deleted }, 'relay log: old rows removed');
    } catch (e) {
      this.log.warn({ err: { message: (e as Error).message } }, 'relay log: pruning failed');
    }
  }

  async close() {
    if (this.pruner) clearInterval(this.pruner);
    for (let i = 0; i < ROW_TRIES && (i === 0 || this.rows.length); i++) await this.flush();
    if (this.timer) clearTimeout(this.timer);
    if (this.rows.length) this.log.error({ rows: this.rows.length }, 'relay log: rows not written at shutdown');
  }
}
