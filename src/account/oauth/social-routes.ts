import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { implement } from '../../contract/types.js';
import { ok } from '../../kit/http/envelope.js';
import { AppError } from '../../kit/http/errors.js';
import { accountOf } from '../context.js';
import { identityOf } from '../auth.js';
import { clientInfo, sendSession } from '../sessions/http.js';
import { sendChallenge } from '../login/pending-login.js';
import { requireSecurityProof, type ProofVerifier } from '../verification-seam.js';
import { langOfRequest } from '../email/routes.js';
import { TelegramBindError, type TelegramService } from './telegram.js';
import { LoginOutcome, moduleErrors } from '../schemas.js';
import type { WeChatService } from './wechat.js';

const rawQuery = (req: FastifyRequest) => {
  const i = req.raw.url?.indexOf('?') ?? -1;
  return i < 0 ? '' : req.raw.url!.slice(i + 1);
};

/** WeChat (social) and Telegram (chat-bot) login and binding. */
export function socialRoutes(wechat: WeChatService, telegram: TelegramService, verification: ProofVerifier) {
  return [
    implement('A09', {
      data: LoginOutcome,
      errors: moduleErrors.social,
      rateLimit: ['critical'],
      schema: { querystring: Type.Object({ code: Type.Optional(Type.String({ maxLength: 256 })) }) },
      handler: async (req, reply) => {
        const outcome = await wechat.login(req.query.code, clientInfo(req));
        if (outcome.kind === 'challenge') return sendChallenge(req, reply, outcome.data);
        return sendSession(req, reply, outcome.issued);
      },
    }),

    implement('A10', {
      data: Type.Object({ notification_warning: Type.Boolean() }),
      errors: moduleErrors.social,
      rateLimit: ['critical'],
      schema: { body: Type.Object({ code: Type.String({ minLength: 1, maxLength: 128 }) }) },
      handler: async (req) => {
        const identity = identityOf(req);
        if (!wechat.enabled()) throw new AppError('WECHAT_DISABLED');
        await requireSecurityProof(verification, req, identity, 'AccountBind', { provider: 'wechat', code: req.body.code });
        return ok(await wechat.bind(identity, req.body.code, langOfRequest(req)), 'Binding successful');
      },
    }),

    implement('A08', {
      data: LoginOutcome,
      errors: moduleErrors.social,
      rateLimit: ['critical'],
      handler: async (req, reply) => {
        const outcome = await telegram.login(rawQuery(req), clientInfo(req));
        if (outcome.kind === 'challenge') return sendChallenge(req, reply, outcome.data);
        return sendSession(req, reply, outcome.issued);
      },
    }),

    implement('A07', {
      data: Type.Object({ flow_token: Type.String(), callback_url: Type.String(), expires_at: Type.Integer(), bot_name: Type.String() }),
      errors: moduleErrors.social,
      rateLimit: ['critical'],
      handler: async (req) => ok(await telegram.startBind(identityOf(req))),
    }),

    implement('A06', {
      answers: { 302: { description: 'Redirect to the dashboard: /oauth/chatbot?telegram_bind=success&flow_token=… or ?telegram_bind=error&error_code=TELEGRAM_BIND_…' } },
      errors: moduleErrors.social,
      rateLimit: ['critical'],
      schema: { params: Type.Object({ flow_token: Type.String({ minLength: 1, maxLength: 256 }) }) },
      handler: async (req, reply) => {
        const ctx = accountOf(req);
        const token = req.params.flow_token;
        let target = `/oauth/chatbot?telegram_bind=success&flow_token=${encodeURIComponent(token)}`;
        try {
          await telegram.finishBind(token, rawQuery(req));
        } catch (e) {
          const reason = e instanceof TelegramBindError ? e.reason : 'INTERNAL_ERROR';
          if (reason === 'INTERNAL_ERROR') ctx.log.error({ err: e }, 'Telegram binding failed');
          target = `/oauth/chatbot?telegram_bind=error&error_code=TELEGRAM_BIND_${reason}`;
        }
        return reply.redirect(target, 302);
      },
    }),
  ];
}
