import type { Lang } from '../../kit/http/errors.js';

/** Mail texts in English and Chinese. Subjects never carry a code or token. */
type Params = Record<string, string | number>;
type Template = { subject: string; text: string };

const TEMPLATES: Record<string, Record<Lang, (p: Params) => Template>> = {
  verification_code: {
    en: (p) => ({
      subject: 'Your verification code',
      text: `Your verification code is ${p.code}. It is valid for ${p.minutes} minutes.\n\nIf you did not request it, ignore this mail.`,
    }),
    zh: (p) => ({
      subject: '您的验证码',
      text: `您的验证码为 ${p.code}，${p.minutes} 分钟内有效。\n\n如果不是您本人操作，请忽略本邮件。`,
    }),
  },
  address_in_use: {
    en: () => ({
      subject: 'Your verification code',
      text: 'Someone asked for a sign-up code for this address, but it already belongs to an account.\n\nIf that was you, sign in or reset your password instead. Otherwise ignore this mail.',
    }),
    zh: () => ({
      subject: '您的验证码',
      text: '有人为此邮箱申请了注册验证码，但该邮箱已绑定账户。\n\n如果是您本人，请直接登录或重置密码；否则请忽略本邮件。',
    }),
  },
  password_reset: {
    en: (p) => ({
      subject: 'Password reset',
      text: `Open this link to reset your password (valid for ${p.minutes} minutes):\n\n${p.link}\n\nIf you did not request it, ignore this mail.`,
    }),
    zh: (p) => ({
      subject: '密码重置',
      text: `请打开以下链接重置密码（${p.minutes} 分钟内有效）：\n\n${p.link}\n\n如果不是您本人操作，请忽略本邮件。`,
    }),
  },
  binding_code: {
    en: (p) => ({
      subject: 'Confirm your email address',
      text: `Your code to bind this address to your account is ${p.code}. It is valid for ${p.minutes} minutes.\n\nIf you did not request it, ignore this mail.`,
    }),
    zh: (p) => ({
      subject: '确认您的邮箱地址',
      text: `您用于绑定此邮箱的验证码为 ${p.code}，${p.minutes} 分钟内有效。\n\n如果不是您本人操作，请忽略本邮件。`,
    }),
  },
  security_notice: {
    en: (p) => ({
      subject: 'Account security change',
      text: `A security setting of your account changed: ${p.action}.\n\nIf this was not you, reset your password and review your sign-in methods.`,
    }),
    zh: (p) => ({
      subject: '账户安全变更通知',
      text: `您的账户安全设置发生了变更：${p.action}。\n\n如果不是您本人操作，请立即重置密码并检查登录方式。`,
    }),
  },
};

export type TemplateName = keyof typeof TEMPLATES;

export function renderMail(name: string, lang: Lang, params: Params = {}): Template {
  const t = TEMPLATES[name];
  if (!t) throw new Error(`unknown mail template ${name}`);
  return t[lang](params);
}
