import { AppError } from '../../kit/http/errors.js';
import { audit, type Actor } from '../audit/store.js';
import { recordBalance, setAutoStatus } from '../channels/auto-status.js';
import type { ChannelService } from '../channels/service.js';
import { CHANNEL_TYPES, parseInfo, STATUS } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import type { JobRun, JobService } from '../jobs/service.js';
import { outcomeOfError } from '../metrics.js';
import { balanceReaderOf, balanceTypes, providerOf } from '../providers/index.js';
import type { Balance, ProviderContext } from '../providers/types.js';
import type { UpstreamTarget } from '../upstream/target.js';

export const JOB_TYPE = 'balance_update';
const SYSTEM: Actor = { id: 0, name: 'system:balance_update' };
const PAGE = 500;

const typeName = (type: number) => CHANNEL_TYPES[type]?.name ?? String(type);

/** Reads the balance of a target; UPSTREAM_NOT_SUPPORTED for types without a balance query. */
async function readBalance(ctx: ProviderContext, t: UpstreamTarget, typeName: string): Promise<Balance> {
  const reader = balanceReaderOf(t.type);
  if (!reader) throw new AppError('UPSTREAM_NOT_SUPPORTED', { params: { operation: 'a balance query', type: typeName } });
  const base = t.baseUrl || reader.host?.replace(/\/+$/, '') || '';
  if (!base) throw new AppError('CHANNEL_INVALID', { params: { detail: 'the channel has no base_url' } });
  return reader.read(ctx, t, base);
}

/** Channel balances: one channel now (G36), all supported channels as a background job (G35). */
export class BalanceService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
    private readonly jobs: JobService,
  ) {}

  /** Reads and stores one channel's balance (multi-key channels have no single balance). */
  private async update(id: number): Promise<Balance> {
    const t = await this.channels.target(id);
    if (t.keyIndex !== null) throw new AppError('CHANNEL_BALANCE_MULTI_KEY');
    const b = await this.read(t);
    await recordBalance(this.ctx, id, b.balance);
    return b;
  }

  /** Reads a target's balance, counted by its type's provider and the outcome. */
  private async read(t: UpstreamTarget): Promise<Balance> {
    const family = providerOf(t.type).name;
    try {
      const b = await readBalance(this.ctx, t, typeName(t.type));
      this.ctx.metrics.upstreamCall('balance', family, 'ok');
      return b;
    } catch (e) {
      this.ctx.metrics.upstreamCall('balance', family, outcomeOfError(e));
      throw e;
    }
  }

  /** G36: audited with the outcome (the failure's code, never upstream text). */
  async updateOne(actor: Actor, id: number) {
    try {
      const b = await this.update(id);
      await audit(this.ctx.db, actor, 'G36', id, { balance: b.balance, currency: b.currency });
      return b;
    } catch (e) {
      if (e instanceof AppError && e.code !== 'CHANNEL_NOT_FOUND') await audit(this.ctx.db, actor, 'G36', id, { failed: e.code });
      throw e;
    }
  }

  /** G35: every enabled single-key channel of a supported type, CONCURRENCY at a time, as a job. */
  startAll(actor: Actor) {
    return this.jobs.start(actor, 'G35', JOB_TYPE, {}, (run) => this.updateAll(run));
  }

  private candidates(afterId: number) {
    return this.ctx.db
      .selectFrom('channels')
      .select(['id', 'auto_ban', 'channel_info'])
      .where('status', '=', STATUS.enabled)
      .where('type', 'in', balanceTypes())
      .where('id', '>', afterId)
      .orderBy('id')
      .limit(PAGE)
      .execute();
  }

  private async updateAll(run: JobRun) {
    const progress = { done: 0, updated: 0, failed: 0, skipped: 0, disabled: 0 };
    const failures: { channel_id: number; code: string }[] = [];
    const one = async (c: { id: number; auto_ban: number; channel_info: string }) => {
      if (parseInfo(c.channel_info).is_multi_key) {
        progress.skipped++;
        return;
      }
      try {
        const b = await this.update(c.id);
        progress.updated++;
        // As the reference: a channel without money left is disabled (when the automatic rules are on).
        if (b.balance <= 0 && this.ctx.config.gateway.channelTest.autoDisable && c.auto_ban === 1) {
          if (await setAutoStatus(this.ctx, SYSTEM, 'G35', { channelId: c.id, disable: true, reason: 'insufficient balance' })) progress.disabled++;
        }
      } catch (e) {
        progress.failed++;
        if (failures.length < 1000) failures.push({ channel_id: c.id, code: e instanceof AppError ? e.code : 'internal' });
        if (!(e instanceof AppError)) this.ctx.log.error({ err: e, channel_id: c.id }, 'balance update failed');
      }
    };
    let afterId = 0;
    for (;;) {
      const page = (await this.candidates(afterId)).map((r) => ({ id: Number(r.id), auto_ban: Number(r.auto_ban), channel_info: r.channel_info }));
      let next = 0;
      const worker = async () => {
        while (next < page.length && !run.signal.aborted) {
          await one(page[next++]!);
          progress.done++;
          run.progress({ ...progress });
        }
      };
      await Promise.all(Array.from({ length: this.ctx.config.gateway.channelTest.concurrency }, worker));
      if (page.length < PAGE || run.signal.aborted) break;
      afterId = page.at(-1)!.id;
    }
    return { ...progress, failures };
  }
}
