import crypto from 'node:crypto';
import { AppError } from '../../kit/http/errors.js';
import { parseJson } from '../../kit/upstream/client.js';
import { scrubSecrets } from '../../kit/upstream/scrub.js';
import { audit, type Actor } from '../audit/store.js';
import type { ChannelService } from '../channels/service.js';
import { TYPE_CODEX } from '../channels/types.js';
import type { GatewayContext } from '../context.js';
import { releaseLease, tryLease } from '../leases.js';
import { codexHeaders, parseCodexKey, type CodexKey } from '../providers/codex/index.js';
import { okJson, send } from '../upstream/http.js';
import type { UpstreamTarget } from '../upstream/target.js';

const REFRESH_TIMEOUT_MS = 10_000;
const USAGE_TIMEOUT_MS = 15_000;
const LEASE_SECONDS = 30;

/** The claims of a JWT's payload, read without verifying it: only to fill in missing account details. */
function claims(jwt: unknown): Record<string, unknown> {
  if (typeof jwt !== 'string') return {};
  const payload = jwt.split('.')[1];
  const v = payload ? parseJson(Buffer.from(payload, 'base64url').toString('utf8')) : undefined;
  return v && typeof v === 'object' ? (v as Record<string, unknown>) : {};
}

function accountOf(c: Record<string, unknown>): { account_id?: string; email?: string } {
  const auth = (c['https://api.openai.com/auth'] ?? {}) as { chatgpt_account_id?: unknown };
  return {
    ...(typeof auth.chatgpt_account_id === 'string' ? { account_id: auth.chatgpt_account_id } : {}),
    ...(typeof c.email === 'string' ? { email: c.email } : {}),
  };
}

/** What G06 answers about a key: never a token. */
function keyInfo(t: UpstreamTarget, k: CodexKey) {
  return { expires_at: k.expired ?? null, last_refresh: k.last_refresh ?? null, account_id: k.account_id, email: k.email ?? null, channel_id: t.channelId, channel_type: t.type, channel_name: t.name };
}

/** Coder (Codex through a ChatGPT account) channels: OAuth refresh and the usage endpoints (G06–G09). */
export class CoderService {
  constructor(
    private readonly ctx: GatewayContext,
    private readonly channels: ChannelService,
  ) {}

  private get config() {
    return this.ctx.config.gateway.coder;
  }

  private async target(id: number): Promise<{ t: UpstreamTarget; key: CodexKey }> {
    const t = await this.channels.target(id);
    if (t.type !== TYPE_CODEX) throw new AppError('CHANNEL_NOT_CODER');
    if (t.keyIndex !== null) throw new AppError('CHANNEL_CODER_MULTI_KEY');
    return { t, key: parseCodexKey(t.key) };
  }

  /**
   * G06: trades the refresh token for new tokens and stores the new key. One refresh of a channel at a
   * time across instances (a lease): a second caller waits for the first and answers with its result, so
   * a rotated refresh token is never sent twice.
   */
  async refresh(actor: Actor, id: number) {
    const lease = `coder_refresh:${id}`;
    await this.target(id);
    if (!(await tryLease(this.ctx.db, lease, LEASE_SECONDS))) {
      let acquired = false;
      for (let waited = 0; waited < LEASE_SECONDS * 1000 && !acquired; waited += 100) {
        await new Promise((r) => setTimeout(r, 100));
        acquired = await tryLease(this.ctx.db, lease, LEASE_SECONDS);
      }
      if (acquired) await releaseLease(this.ctx.db, lease);
      const fresh = await this.target(id);
      return keyInfo(fresh.t, fresh.key);
    }
    try {
      // Read under the lease: a refresh that finished just before must not be repeated with its spent token.
      const { t, key } = await this.target(id);
      const next = await this.exchange(t, key);
      const replaced = await this.channels.replaceKey(actor, 'G06', id, t.key, JSON.stringify(next), { account_id: next.account_id, expires_at: next.expired ?? null });
      if (!replaced) throw new AppError('CHANNEL_KEY_CHANGED');
      return keyInfo(t, next);
    } catch (e) {
      if (e instanceof AppError && e.code !== 'CHANNEL_KEY_CHANGED') await audit(this.ctx.db, actor, 'G06', id, { failed: e.code });
      throw e;
    } finally {
      await releaseLease(this.ctx.db, lease);
    }
  }

  /** The token endpoint call (form-encoded, RFC 6749 §6) and the new key it makes. */
  private async exchange(t: UpstreamTarget, key: CodexKey): Promise<CodexKey> {
    if (typeof key.refresh_token !== 'string' || !key.refresh_token) throw new AppError('CHANNEL_CODER_NO_REFRESH_TOKEN');
    const form = new URLSearchParams({ grant_type: 'refresh_token', refresh_token: key.refresh_token, client_id: this.config.clientId, scope: 'openid profile email' });
    const res = await send(this.ctx.upstream, t, {
      url: this.config.tokenUrl,
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: form.toString(),
      timeoutMs: REFRESH_TIMEOUT_MS,
    });
    const body = okJson<{ access_token?: unknown; refresh_token?: unknown; id_token?: unknown; expires_in?: unknown }>(res, t);
    if (typeof body.access_token !== 'string' || !body.access_token) throw new AppError('UPSTREAM_BAD_RESPONSE', { params: { detail: 'no access_token in the token answer' } });
    const now = new Date();
    const found = { ...accountOf(claims(body.access_token)), ...accountOf(claims(body.id_token)) };
    return {
      ...key,
      access_token: body.access_token,
      ...(typeof body.refresh_token === 'string' && body.refresh_token ? { refresh_token: body.refresh_token } : {}),
      ...(typeof body.id_token === 'string' ? { id_token: body.id_token } : {}),
      account_id: key.account_id || found.account_id || '',
      ...(key.email || found.email ? { email: key.email || found.email } : {}),
      type: 'codex',
      last_refresh: now.toISOString(),
      ...(typeof body.expires_in === 'number' ? { expired: new Date(now.getTime() + body.expires_in * 1000).toISOString() } : {}),
    };
  }

  /**
   * G07 / G08 / G09: one call to the ChatGPT backend's usage API; on 401/403 the key is refreshed once and
   * the call repeated. Answers the upstream's status and its answer (JSON, else text), scrubbed.
   */
  async usage(actor: Actor, operation: 'G07' | 'G08' | 'G09', id: number, idempotencyKey?: string) {
    let { t, key } = await this.target(id);
    const path = operation === 'G07' ? '/backend-api/wham/usage' : operation === 'G09' ? '/backend-api/wham/rate-limit-reset-credits' : '/backend-api/wham/rate-limit-reset-credits/consume';
    const body = operation === 'G08' ? JSON.stringify({ redeem_request_id: this.redeemId(id, idempotencyKey) }) : undefined;
    const call = (k: CodexKey) =>
      send(this.ctx.upstream, t, {
        url: t.baseUrl + path,
        method: operation === 'G08' ? 'POST' : 'GET',
        headers: { ...codexHeaders(t, k), ...(body ? { 'content-type': 'application/json' } : {}) },
        body,
        timeoutMs: USAGE_TIMEOUT_MS,
      });
    let res = await call(key);
    if (res.status === 401 || res.status === 403) {
      await this.refresh(actor, id);
      ({ t, key } = await this.target(id));
      res = await call(key);
    }
    const text = scrubSecrets(res.text, t.secrets);
    const data = parseJson(text) ?? text;
    const ok = res.status >= 200 && res.status < 300;
    await audit(this.ctx.db, actor, operation, id, { upstream_status: res.status, ...(operation === 'G08' && idempotencyKey ? { idempotency: true } : {}) });
    return { success: ok, message: ok ? '' : `upstream answered HTTP ${res.status}`, upstream_status: res.status, data };
  }

  /**
   * The redeem request id of a reset: with an Idempotency-Key, derived from it and the channel (HMAC with
   * the gateway's secret), so a repeated click redeems at most one credit; without one, random.
   */
  private redeemId(id: number, idempotencyKey?: string): string {
    if (!idempotencyKey) return crypto.randomUUID();
    const h = crypto.createHmac('sha256', this.ctx.secretKey).update(`coder-redeem:${id}:${idempotencyKey}`).digest('hex');
    return `${h.slice(0, 8)}-${h.slice(8, 12)}-4${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
  }
}
