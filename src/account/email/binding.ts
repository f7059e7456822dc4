import { AppError, type Lang } from '../../kit/http/errors.js';
import { deriveKey, hmac, safeEqual } from '../../kit/crypto/tokens.js';
import { isUniqueViolation } from '../../kit/db/index.js';
import { maskAddress } from '../../kit/mail/index.js';
import { nowSeconds } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import { bindingDb, bindingsStore } from '../bindings/store.js';
import { CODE_MAX_ATTEMPTS, normalizeEmail, sixDigitCode, type EmailService } from './service.js';
import type { FlowsService } from '../flows/service.js';
import type { SessionsService } from '../sessions/service.js';

export const EMAIL_BINDING_RESEND_SECONDS = 60;

interface BindingPayload {
  email: string;
  new_hash: string;
  old_email: string | null;
  old_hash: string | null;
  resend_at: number;
}

/** A04 → A03 → A02: binding (or changing) the account email with codes sent to the new and, when required, the old address. */
export function createEmailBindingService(ctx: AccountContext, { email, flows, sessions }: { email: EmailService; flows: FlowsService; sessions: SessionsService }) {
  const db = bindingDb(ctx);
  const key = deriveKey(ctx.secret, 'email-binding');
  const hashOf = (address: string, code: string) => hmac(key, `${address}\n${code}`);
  /** Codes (and the flow carrying them) live EMAIL_CODE_TTL_SECONDS, like A46's registration codes. */
  const ttlSeconds = ctx.config.mailOAuth.emailCodeTtlSeconds;
  const minutes = Math.round(ttlSeconds / 60);

  function requireBrowser(identity: AccountIdentity) {
    if (identity.via === 'personal_token' || !identity.sid) throw new AppError('EMAIL_BINDING_PERSONAL_TOKEN');
  }

  async function liveFlow(identity: AccountIdentity, token: string | undefined) {
    const flow = await flows.peek<BindingPayload>(token, 'email_binding');
    if (!flow || flow.userId !== identity.userId || flow.sessionId !== identity.sid) throw new AppError('EMAIL_BINDING_FLOW_INVALID');
    return flow;
  }

  /** Creates fresh codes, mails them, and returns the payload to store; throws after consuming the flow if mail fails. */
  async function sendCodes(base: Omit<BindingPayload, 'new_hash' | 'old_hash' | 'resend_at'>, token: string | null, lang: Lang) {
    const newCode = sixDigitCode();
    const oldCode = base.old_email ? sixDigitCode() : null;
    const payload: BindingPayload = {
      ...base,
      new_hash: hashOf(base.email, newCode),
      old_hash: oldCode && base.old_email ? hashOf(base.old_email, oldCode) : null,
      resend_at: nowSeconds() + EMAIL_BINDING_RESEND_SECONDS,
    };
    let delivered = await email.send(base.email, 'binding_code', lang, { code: newCode, minutes });
    if (delivered && oldCode && base.old_email) delivered = await email.send(base.old_email, 'binding_code', lang, { code: oldCode, minutes });
    return { payload, delivered };
  }

  function view(token: string, p: BindingPayload, expiresAt: number, current: string | null) {
    return {
      flow_token: token,
      email: p.email,
      current_email: current ? maskAddress(current) : '',
      old_email_required: Boolean(p.old_email),
      expires_at: expiresAt,
      resend_at: p.resend_at,
      notification_warning: false,
    };
  }

  return {
    /** A04 (after the AccountBind proof, whose method decides whether the old address must confirm too). */
    async start(identity: AccountIdentity, rawEmail: string | undefined, proofMethod: string, ip: string, lang: Lang) {
      requireBrowser(identity);
      const address = normalizeEmail(rawEmail);
      await email.limitSends(ip, address);
      const user = await bindingsStore.userById(db, identity.userId);
      if (!user) throw new AppError('AUTH_UNAUTHORIZED');
      const oldRequired = Boolean(user.email) && user.email !== address && !['2fa', 'passkey'].includes(proofMethod);
      const flow = await flows.create({
        purpose: 'email_binding',
        ttlSeconds,
        userId: identity.userId,
        sessionId: identity.sid,
        provider: 'email',
        payload: {},
      });
      const { payload, delivered } = await sendCodes({ email: address, old_email: oldRequired ? user.email : null }, flow.token, lang);
      if (!delivered) {
        await flows.consume(flow.token, 'email_binding');
        throw new AppError('EMAIL_BINDING_DELIVERY_FAILED');
      }
      await flows.updatePayload(flow.token, payload);
      return view(flow.token, payload, flow.expiresAt, user.email);
    },

    /** A03: new codes for the same flow, no sooner than the resend time. */
    async resend(identity: AccountIdentity, token: string | undefined, lang: Lang) {
      requireBrowser(identity);
      const flow = await liveFlow(identity, token);
      const wait = flow.payload.resend_at - nowSeconds();
      if (wait > 0) throw new AppError('EMAIL_BINDING_RESEND_WAIT', { params: { seconds: wait }, headers: { 'Retry-After': String(wait) } });
      const { payload, delivered } = await sendCodes({ email: flow.payload.email, old_email: flow.payload.old_email }, token!, lang);
      if (!delivered) {
        await flows.consume(token, 'email_binding');
        throw new AppError('EMAIL_BINDING_DELIVERY_FAILED');
      }
      await flows.updatePayload(token!, payload);
      const user = await bindingsStore.userById(db, identity.userId);
      return view(token!, payload, flow.expiresAt, user?.email ?? null);
    },

    /** A02: checks the code(s), then sets the address; both addresses are told. */
    async complete(identity: AccountIdentity, input: { flow_token?: string; code?: string; new_code?: string; old_code?: string; email?: string }, lang: Lang) {
      requireBrowser(identity);
      const token = input.flow_token;
      const flow = await liveFlow(identity, token);
      const p = flow.payload;
      if (input.email && input.email.trim().toLowerCase() !== p.email) throw new AppError('EMAIL_BINDING_FLOW_INVALID');
      const newCode = input.new_code ?? input.code ?? '';
      const okNew = safeEqual(hashOf(p.email, newCode), p.new_hash);
      const okOld = !p.old_hash || (p.old_email !== null && safeEqual(hashOf(p.old_email, input.old_code ?? ''), p.old_hash));
      if (!okNew || !okOld) {
        if ((await flows.addAttempt(token!)) >= CODE_MAX_ATTEMPTS) {
          await flows.consume(token, 'email_binding');
          throw new AppError('EMAIL_BINDING_LOCKED');
        }
        throw new AppError('EMAIL_BINDING_CODE_INVALID');
      }
      if (!(await flows.consume(token, 'email_binding'))) throw new AppError('EMAIL_BINDING_FLOW_INVALID');
      const holder = await db.selectFrom('users').select('id').where('email', '=', p.email).executeTakeFirst();
      if (holder && Number(holder.id) !== identity.userId) throw new AppError('EMAIL_ALREADY_TAKEN');
      const before = await bindingsStore.userById(db, identity.userId);
      try {
        await bindingsStore.setEmail(db, identity.userId, p.email);
      } catch (e) {
        if (isUniqueViolation(e)) throw new AppError('EMAIL_ALREADY_TAKEN');
        throw e;
      }
      // A new recovery address is a security change: other sessions end, this one continues with fresh tokens.
      const rotation = await sessions.rotateAuthority(identity, 'email_changed');
      let warning = await email.notify(p.email, 'email address bound', lang);
      if (before?.email && before.email !== p.email) warning = (await email.notify(before.email, 'email address changed', lang)) || warning;
      return { ...rotation, email: p.email, notification_warning: warning };
    },
  };
}

export type EmailBindingService = ReturnType<typeof createEmailBindingService>;
