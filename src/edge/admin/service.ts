import {
  EDGE_GATEWAY_MODEL_PATTERN,
  EDGE_GROUP_PATTERN,
  EDGE_MODEL_ID_PATTERN,
  EDGE_OWNER_PATTERN,
  EdgeAdminRefusal,
  type EdgeAdminPort,
  type EdgeModel,
  type EdgeModelSettings,
  type EdgeWallet,
} from '../../contract/edge-admin.js';
import type { EdgeContext } from '../context.js';
import type { KeyService } from '../keys/service.js';
import { ensureOwner, ownerByName } from '../keys/store.js';
import { listModels, modelOf, setModel } from '../models/store.js';
import { ownerUsage, settledByOwner } from '../runs/usage.js';
import { credit, listWallets, walletOf } from '../wallets/store.js';
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
 * commands and the gateway console (through EdgeAdminPort) both call. Amounts are integer units.
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

  async setModel(publicModelId: string, s: EdgeModelSettings) {
    check(MODEL_ID.test(publicModelId), 'the public model id must be 1 to 128 of A-Z a-z 0-9 . _ : / -');
    check(s.gateway_model === null || GATEWAY_MODEL.test(s.gateway_model), 'the gateway model must be 1 to 255 characters without spaces');
    check(GROUP.test(s.group), 'the group must be 1 to 64 of A-Z a-z 0-9 _ . -');
    check(units(s.reserve_amount) && units(s.overdraft), 'reserve and overdraft must be non-negative integers');
    await setModel(this.ctx.db, publicModelId, { reserveAmount: s.reserve_amount, enabled: s.enabled, gatewayModel: s.gateway_model, group: s.group, overdraft: s.overdraft });
    return modelView((await modelOf(this.ctx.db, publicModelId))!);
  }

  async listKeys(owner?: string) {
    return (await this.keys.list(owner)).map((r) => ({ key_id: r.key_id, owner: r.owner, created_at: Number(r.created_at), revoked_at: r.revoked_at === null ? null : Number(r.revoked_at) }));
  }

  async issueKey(owner: string) {
    checkOwner(owner);
    const r = await this.keys.issue(owner);
    return { key_id: r.keyId, owner: r.owner, key: r.token };
  }

  revokeKey(keyId: string) {
    return this.keys.revoke(keyId);
  }

  async listWallets() {
    const settled = await settledByOwner(this.ctx.db);
    return (await listWallets(this.ctx.db)).map((w) => walletView(w.owner, w, settled.get(Number(w.owner_id))));
  }

  async wallet(owner: string) {
    const o = await ownerByName(this.ctx.db, owner);
    const w = o ? await walletOf(this.ctx.db, Number(o.id)) : undefined;
    if (!o || !w) return undefined;
    return walletView(owner, w, (await settledByOwner(this.ctx.db, Number(o.id))).get(Number(o.id)));
  }

  async credit(owner: string, amount: number) {
    checkOwner(owner);
    check(Number.isSafeInteger(amount) && amount >= 1, 'the amount must be an integer of at least 1');
    await credit(this.ctx.db, await ensureOwner(this.ctx.db, owner), amount);
    return (await this.wallet(owner))!;
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

  async addWebhook(owner: string, url: string) {
    checkOwner(owner);
    const problem = webhookUrlProblem(url);
    if (problem) throw new EdgeAdminRefusal('invalid', `the URL ${problem}`);
    const r = await this.webhooks.add(owner, url);
    return { endpoint_id: r.endpointId, owner: r.owner, url: r.url, secret: r.secret };
  }

  removeWebhook(endpointId: string) {
    return this.webhooks.remove(endpointId);
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
