import {
  EDGE_GATEWAY_MODEL_PATTERN,
  EDGE_GROUP_PATTERN,
  EDGE_MODEL_ID_PATTERN,
  EDGE_OWNER_PATTERN,
  EdgeAdminRefusal,
  type EdgeActor,
  type EdgeAdminPort,
  type EdgeModel,
  type EdgeModelSettings,
  type EdgeWallet,
} from '../../contract/edge-admin.js';
import { CUSTOMER_OWNER_PREFIX } from '../../contract/customer.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { appendAudit } from '../audit/store.js';
import type { EdgeContext } from '../context.js';
import type { KeyService } from '../keys/service.js';
import { ensureOwner, ownerByName, type Db } from '../keys/store.js';
import { listModels, modelOf, setModel } from '../models/store.js';
import { ownerUsage, settledByOwner } from '../runs/usage.js';
import { credit, creditOf, insertCredit, listWallets, walletOf } from '../wallets/store.js';
import { webhookUrlProblem, type WebhookService } from '../webhooks/service.js';

const OWNER = new RegExp(EDGE_OWNER_PATTERN);
const MODEL_ID = new RegExp(EDGE_MODEL_ID_PATTERN);
const GROUP = new RegExp(EDGE_GROUP_PATTERN);
const GATEWAY_MODEL = new RegExp(EDGE_GATEWAY_MODEL_PATTERN);

function check(ok: boolean, detail: string) {
  if (!ok) throw new EdgeAdminRefusal('invalid', detail);
}

const units = (n: number) => Number.isSafeInteger(n) && n >= 0;

function checkOwner(owner: string) {
  check(OWNER.test(owner), 'owner must be 1 to 64 letters, digits, dots, dashes or underscores');
}

/**
 * Owners named `account-…` are account users' (src/contract/customer.ts): only the account service creates
 * them. The CLI and the console may credit or equip one that exists, never make one up.
 */
async function checkOwnerMayBeCreated(db: Db, owner: string) {
  if (!owner.startsWith(CUSTOMER_OWNER_PREFIX) || (await ownerByName(db, owner))) return;
  throw new EdgeAdminRefusal('invalid', `owner names starting with "${CUSTOMER_OWNER_PREFIX}" belong to account users and are created by the account service; ${owner} does not exist`);
}

type ModelRow = NonNullable<Awaited<ReturnType<typeof modelOf>>>;
const modelView = (r: ModelRow): EdgeModel => ({
  public_model_id: r.public_model_id,
  reserve_amount: Number(r.reserve_amount),
  gateway_model: r.gateway_model,
  group: r.group_name,
  overdraft: Number(r.overdraft),
  enabled: Number(r.enabled) === 1,
  updated_at: Number(r.updated_at),
});

/**
 * The edge's administration (public models, keys, wallets, usage, webhooks): what the CLI's `edge …`
 * commands and the gateway console (through EdgeAdminPort) both call. Amounts are integer units. Every
 * change is recorded in edge_audit with who asked, in the change's own transaction (the edge's audit log
 * whatever the entry point; the console's changes are in the gateway's audit log too, with the outcome).
 */
export class EdgeAdmin implements EdgeAdminPort {
  constructor(
    private readonly ctx: EdgeContext,
    private readonly keys: KeyService,
    private readonly webhooks: WebhookService,
    private readonly relayConfigured: boolean,
  ) {}

  status() {
    return { admission_mode: this.ctx.config.edge.admissionMode, relay_configured: this.relayConfigured };
  }

  async listModels() {
    return (await listModels(this.ctx.db)).map(modelView);
  }

  /** Runs `change` and records it as `operation` (unless `detail` says nothing changed: null), in one transaction. */
  private changed<T>(by: EdgeActor, operation: string, change: (trx: Db) => Promise<T>, detail: (result: T) => Record<string, unknown> | null): Promise<T> {
    return this.ctx.db.transaction().execute(async (trx) => {
      const result = await change(trx);
      const d = detail(result);
      if (d) await appendAudit(trx, by, operation, d);
      return result;
    });
  }

  async setModel(publicModelId: string, s: EdgeModelSettings, by: EdgeActor) {
    check(MODEL_ID.test(publicModelId), 'the public model id must be 1 to 128 of A-Z a-z 0-9 . _ : / -');
    check(s.gateway_model === null || GATEWAY_MODEL.test(s.gateway_model), 'the gateway model must be 1 to 255 characters without spaces');
    check(GROUP.test(s.group), 'the group must be 1 to 64 of A-Z a-z 0-9 _ . -');
    check(units(s.reserve_amount) && units(s.overdraft), 'reserve and overdraft must be non-negative integers');
    return this.changed(
      by,
      'model.set',
      async (trx) => {
        await setModel(trx, publicModelId, { reserveAmount: s.reserve_amount, enabled: s.enabled, gatewayModel: s.gateway_model, group: s.group, overdraft: s.overdraft });
        return modelView((await modelOf(trx, publicModelId))!);
      },
      (m) => ({ public_model_id: m.public_model_id, reserve_amount: m.reserve_amount, gateway_model: m.gateway_model, group: m.group, overdraft: m.overdraft, enabled: m.enabled }),
    );
  }

  async listKeys(owner?: string) {
    return (await this.keys.list(owner)).map((r) => ({ key_id: r.key_id, owner: r.owner, created_at: Number(r.created_at), revoked_at: r.revoked_at === null ? null : Number(r.revoked_at) }));
  }

  async issueKey(owner: string, by: EdgeActor) {
    checkOwner(owner);
    const r = await this.changed(
      by,
      'key.issue',
      async (trx) => {
        await checkOwnerMayBeCreated(trx, owner);
        return this.keys.issue(owner, trx);
      },
      (k) => ({ owner, key_id: k.keyId }),
    );
    return { key_id: r.keyId, owner: r.owner, key: r.token };
  }

  revokeKey(keyId: string, by: EdgeActor) {
    return this.changed(by, 'key.revoke', (trx) => this.keys.revoke(keyId, trx), (done) => (done ? { key_id: keyId } : null));
  }

  async listWallets() {
    const settled = await settledByOwner(this.ctx.db);
    return (await listWallets(this.ctx.db)).map((w) => walletView(w.owner, w, settled.get(Number(w.owner_id))));
  }

  async wallet(owner: string, db: Db = this.ctx.db) {
    const o = await ownerByName(db, owner);
    const w = o ? await walletOf(db, Number(o.id)) : undefined;
    if (!o || !w) return undefined;
    return walletView(owner, w, (await settledByOwner(db, Number(o.id))).get(Number(o.id)));
  }

  async credit(owner: string, amount: number, by: EdgeActor, creditId?: string) {
    checkOwner(owner);
    check(Number.isSafeInteger(amount) && amount >= 1, 'the amount must be an integer of at least 1');
    check(creditId === undefined || (creditId.length >= 1 && creditId.length <= 320), 'the credit id must be 1 to 320 characters');
    try {
      return await this.changed(
        by,
        'wallet.credit',
        async (trx) => {
          await checkOwnerMayBeCreated(trx, owner);
          const ownerId = await ensureOwner(trx, owner);
          await credit(trx, ownerId, amount);
          const w = (await this.wallet(owner, trx))!;
          // Last, in the same transaction: a second credit with this id fails here and adds nothing.
          if (creditId !== undefined) await insertCredit(trx, { credit_id: creditId, owner_id: ownerId, amount, wallet: JSON.stringify(w) });
          return w;
        },
        (w) => ({ owner, amount, balance: w.balance, ...(creditId !== undefined ? { credit_id: creditId } : {}) }),
      );
    } catch (e) {
      if (creditId === undefined || !isUniqueViolation(e)) throw e;
      const first = await creditOf(this.ctx.db, creditId);
      if (!first) throw e;
      const o = await ownerByName(this.ctx.db, owner);
      if (Number(first.owner_id) !== Number(o?.id) || Number(first.amount) !== amount) throw new EdgeAdminRefusal('conflict', 'this credit id was used for another credit');
      return JSON.parse(first.wallet) as EdgeWallet;
    }
  }

  async usage(owner: string, days: number) {
    check(Number.isSafeInteger(days) && days >= 1, 'days must be an integer of at least 1');
    const o = await ownerByName(this.ctx.db, owner);
    if (!o) return null;
    return (await ownerUsage(this.ctx.db, Number(o.id), days)).map((l) => ({
      day: l.day,
      model: l.model,
      calls: l.calls,
      failed: l.failed,
      prompt_tokens: l.promptTokens,
      completion_tokens: l.completionTokens,
      cost: l.cost,
    }));
  }

  async listWebhooks() {
    return (await this.webhooks.list()).map((r) => ({ endpoint_id: r.endpoint_id, owner: r.owner, url: r.url, created_at: Number(r.created_at), removed_at: r.removed_at === null ? null : Number(r.removed_at) }));
  }

  async addWebhook(owner: string, url: string, by: EdgeActor) {
    checkOwner(owner);
    const problem = webhookUrlProblem(url);
    if (problem) throw new EdgeAdminRefusal('invalid', `the URL ${problem}`);
    // Only the host is recorded: a receiver's path or query may carry its token.
    const r = await this.changed(
      by,
      'webhook.add',
      async (trx) => {
        await checkOwnerMayBeCreated(trx, owner);
        return this.webhooks.add(owner, url, trx);
      },
      (w) => ({ owner, endpoint_id: w.endpointId, host: new URL(w.url).host }),
    );
    return { endpoint_id: r.endpointId, owner: r.owner, url: r.url, secret: r.secret };
  }

  removeWebhook(endpointId: string, by: EdgeActor) {
    return this.changed(by, 'webhook.remove', (trx) => this.webhooks.remove(endpointId, trx), (done) => (done ? { endpoint_id: endpointId } : null));
  }

  async ownerNames(ids: number[]) {
    if (ids.length === 0) return new Map<number, string>();
    const rows = await this.ctx.db.selectFrom('edge_owners').select(['id', 'name']).where('id', 'in', ids).execute();
    return new Map(rows.map((r) => [Number(r.id), r.name]));
  }

  replay(where: { eventId?: string; sinceSequence?: number }) {
    check((where.eventId === undefined) !== (where.sinceSequence === undefined), 'give exactly one of the event id and the sequence');
    return this.webhooks.replay(where);
  }
}

function walletView(
  owner: string,
  w: { wallet_id: string; balance: number; reserved: number; updated_at: number },
  settled: { runs: number; reserved: number; charged: number } | undefined,
): EdgeWallet {
  const balance = Number(w.balance);
  const reserved = Number(w.reserved);
  return {
    owner,
    wallet_id: w.wallet_id,
    balance,
    reserved,
    available: balance - reserved,
    settled_runs: settled?.runs ?? 0,
    settled_reserved: settled?.reserved ?? 0,
    settled_charged: settled?.charged ?? 0,
    updated_at: Number(w.updated_at),
  };
}
