import path from 'node:path';
import { createMailer } from '../../kit/mail/index.js';
import type { AccountContext } from '../context.js';
import { createEmailService } from '../email/service.js';
import { createEmailBindingService } from '../email/binding.js';
import { createResetService } from '../reset/service.js';
import { createBindingsService } from '../bindings/service.js';
import { createOAuthService, type OAuthService } from './service.js';
import { createWeChatService } from './wechat.js';
import { createTelegramService } from './telegram.js';

/** Mail, email codes, reset, OAuth and bindings: created once per account context. */
export function createEmailOAuthServices(ctx: AccountContext) {
  const cfg = ctx.config.mailOAuth;
  const mailer = createMailer({
    smtpUrl: cfg.mail.smtpUrl,
    from: cfg.mail.from,
    outboxDir: path.join(ctx.config.dataDir, 'outbox'),
    log: ctx.log.child({ module: 'mail' }),
  });
  const email = createEmailService(ctx, mailer);
  const reset = createResetService(ctx, email);
  const emailBinding = createEmailBindingService(ctx, email);
  let oauthService: OAuthService | null = null;
  const bindings = createBindingsService(ctx, () => oauthService!.providers);
  oauthService = createOAuthService(ctx, bindings, email);
  const wechat = createWeChatService(ctx, bindings, email);
  const telegram = createTelegramService(ctx, bindings);
  ctx.hooks.consumeEmailCode = (purpose, address, code) => email.consume(purpose, address, code);
  ctx.hooks.securityChanged = (userId, reason) => email.securityChanged(userId, reason);
  return { mailer, email, reset, emailBinding, bindings, oauth: oauthService, wechat, telegram };
}

export type EmailOAuthServices = ReturnType<typeof createEmailOAuthServices>;
