import { AppError, type Lang } from '../../kit/http/errors.js';
import { USER_STATUS } from '../db.js';
import type { AccountContext, AccountIdentity } from '../context.js';
import type { ClientInfo } from '../sessions/service.js';
import type { LoginOutcome, LoginService } from '../login/service.js';
import type { UserRow } from '../users/store.js';
import type { BindingsService } from '../bindings/service.js';
import type { EmailService } from '../email/service.js';

const KIND = { slug: 'wechat', name: 'WeChat', column: 'wechat_id' as const };

/** A09 / A10: WeChat through the WeChat server's code exchange (code → openid). */
export function createWeChatService(ctx: AccountContext, { bindings, email, login }: { bindings: BindingsService; email: EmailService; login: LoginService }) {
  const cfg = ctx.config.mailOAuth.wechat;

  async function openIdOf(code: string | undefined): Promise<string> {
    if (!cfg.enabled || !cfg.serverAddress) throw new AppError('WECHAT_DISABLED');
    if (!code || code.length > 128) throw new AppError('WECHAT_CODE_INVALID');
    let body: { success?: boolean; data?: unknown };
    try {
      const res = await fetch(`${cfg.serverAddress}/api/wechat/user?code=${encodeURIComponent(code)}`, {
        headers: { authorization: cfg.serverToken, accept: 'application/json' },
        signal: AbortSignal.timeout(10_000),
      });
      body = (await res.json()) as typeof body;
    } catch (e) {
      ctx.log.warn({ err: { name: (e as Error).name, message: (e as Error).message } }, 'WeChat server unreachable');
      throw new AppError('WECHAT_UNAVAILABLE');
    }
    const openId = body?.success === true && typeof body.data === 'string' ? body.data.trim() : '';
    if (!openId || openId.length > 128) throw new AppError('WECHAT_CODE_INVALID');
    return openId;
  }

  return {
    enabled: () => cfg.enabled && Boolean(cfg.serverAddress),

    async login(code: string | undefined, client: ClientInfo): Promise<LoginOutcome> {
      const openId = await openIdOf(code);
      let user = await bindings.findUser(KIND, openId);
      if (user?.deleted_at) throw new AppError('OAUTH_USER_DELETED');
      if (!user) {
        if (!ctx.config.registerEnabled) throw new AppError('REGISTER_DISABLED');
        user = await bindings.createUser(KIND, openId, '', null, 'WeChat User');
      }
      if (user.status !== USER_STATUS.enabled) throw new AppError('OAUTH_USER_BANNED');
      return login.completeLogin(user as UserRow, 'wechat', client);
    },

    async bind(identity: AccountIdentity, code: string | undefined, lang: Lang) {
      const openId = await openIdOf(code);
      const user = await bindings.userById(identity.userId);
      if (!user) throw new AppError('AUTH_UNAUTHORIZED');
      await bindings.bind(identity.userId, KIND, openId, 'WECHAT_ALREADY_BOUND');
      return { notification_warning: await email.notify(user.email, 'WeChat account bound', lang) };
    },
  };
}

export type WeChatService = ReturnType<typeof createWeChatService>;
