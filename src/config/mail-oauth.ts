import fs from 'node:fs';
import { ConfigError, type Env } from './read.js';

/** Mail, email codes, password reset and login-provider settings (docs/configuration.md, "Mail and OAuth providers"). */

const s = (env: Env, name: string, def = '') => {
  const v = env[name];
  return v === undefined || v === '' ? def : v.trim();
};

function n(env: Env, name: string, def: number, min: number, max: number): number {
  const v = s(env, name);
  if (!v) return def;
  if (!/^\d+$/.test(v)) throw new ConfigError(`${name} must be an integer, got "${v}"`);
  const x = Number(v);
  if (x < min || x > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${x}`);
  return x;
}

function url(env: Env, name: string, def = ''): string {
  const v = s(env, name, def).replace(/\/+$/, '');
  if (!v) return '';
  try {
    const u = new URL(v);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error();
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${v}"`);
  }
  return v;
}

function flag(env: Env, name: string, def: boolean): boolean {
  const v = s(env, name);
  if (!v) return def;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
}

/** An operator-defined OAuth 2.0 provider (OAUTH_CUSTOM_PROVIDERS_FILE). */
export interface CustomProviderConfig {
  slug: string;
  name: string;
  icon: string;
  clientId: string;
  clientSecret: string;
  authorizationEndpoint: string;
  tokenEndpoint: string;
  userinfoEndpoint: string;
  scope: string;
  userIdField: string;
  usernameField: string;
  pkce: boolean;
}

const BUILT_IN = ['github', 'discord', 'oidc', 'linuxdo', 'wechat', 'telegram', 'email', 'social', 'chatbot', 'state'];

function customProviders(env: Env): CustomProviderConfig[] {
  const file = s(env, 'OAUTH_CUSTOM_PROVIDERS_FILE');
  if (!file) return [];
  let raw: unknown;
  try {
    raw = JSON.parse(fs.readFileSync(file, 'utf8'));
  } catch (e) {
    throw new ConfigError(`OAUTH_CUSTOM_PROVIDERS_FILE: cannot read JSON from "${file}" (${(e as Error).message})`);
  }
  if (!Array.isArray(raw)) throw new ConfigError('OAUTH_CUSTOM_PROVIDERS_FILE must hold a JSON array of providers');
  const seen = new Set<string>();
  return raw.map((p: Record<string, unknown>, i) => {
    const field = (k: string, required = true) => {
      const v = p?.[k];
      if (v === undefined && !required) return '';
      if (typeof v !== 'string' || (required && !v)) throw new ConfigError(`OAUTH_CUSTOM_PROVIDERS_FILE: provider ${i} needs string "${k}"`);
      return v;
    };
    const slug = field('slug');
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(slug) || BUILT_IN.includes(slug) || seen.has(slug)) {
      throw new ConfigError(`OAUTH_CUSTOM_PROVIDERS_FILE: slug "${slug}" is invalid, reserved or repeated`);
    }
    seen.add(slug);
    for (const k of ['authorization_endpoint', 'token_endpoint', 'userinfo_endpoint']) {
      try {
        new URL(field(k));
      } catch {
        throw new ConfigError(`OAUTH_CUSTOM_PROVIDERS_FILE: provider "${slug}" ${k} is not a URL`);
      }
    }
    return {
      slug,
      name: field('name', false) || slug,
      icon: field('icon', false),
      clientId: field('client_id'),
      clientSecret: field('client_secret'),
      authorizationEndpoint: field('authorization_endpoint'),
      tokenEndpoint: field('token_endpoint'),
      userinfoEndpoint: field('userinfo_endpoint'),
      scope: field('scope', false),
      userIdField: field('user_id_field', false) || 'id',
      usernameField: field('username_field', false) || 'username',
      pkce: p.pkce !== false,
    };
  });
}

export function loadMailOAuthConfig(env: Env) {
  const wechatAddress = url(env, 'WECHAT_SERVER_ADDRESS');
  return {
    serverAddress: url(env, 'SERVER_ADDRESS'),
    mail: {
      smtpUrl: s(env, 'SMTP_URL'),
      from: s(env, 'MAIL_FROM', 'no-reply@localhost'),
    },
    emailCodeTtlSeconds: n(env, 'EMAIL_CODE_TTL_SECONDS', 600, 60, 86400),
    emailRateLimit: n(env, 'EMAIL_VERIFICATION_RATE_LIMIT', 2, 1, 1000),
    emailRateLimitDuration: n(env, 'EMAIL_VERIFICATION_RATE_LIMIT_DURATION', 30, 1, 86400),
    passwordResetTtlSeconds: n(env, 'PASSWORD_RESET_TTL_SECONDS', 600, 60, 86400),
    oauth: {
      allowInsecureHttp: flag(env, 'OAUTH_ALLOW_INSECURE_HTTP', false),
      github: {
        clientId: s(env, 'GITHUB_CLIENT_ID'),
        clientSecret: s(env, 'GITHUB_CLIENT_SECRET'),
        authBase: url(env, 'GITHUB_OAUTH_BASE_URL', 'https://github.com'),
        apiBase: url(env, 'GITHUB_API_BASE_URL', 'https://api.github.com'),
      },
      discord: {
        clientId: s(env, 'DISCORD_CLIENT_ID'),
        clientSecret: s(env, 'DISCORD_CLIENT_SECRET'),
        authBase: url(env, 'DISCORD_OAUTH_BASE_URL', 'https://discord.com'),
        apiBase: url(env, 'DISCORD_API_BASE_URL', 'https://discord.com/api'),
      },
      linuxdo: {
        clientId: s(env, 'LINUXDO_CLIENT_ID'),
        clientSecret: s(env, 'LINUXDO_CLIENT_SECRET'),
        authBase: url(env, 'LINUXDO_BASE_URL', 'https://connect.linux.do'),
        apiBase: url(env, 'LINUXDO_BASE_URL', 'https://connect.linux.do'),
      },
      oidc: {
        clientId: s(env, 'OIDC_CLIENT_ID'),
        clientSecret: s(env, 'OIDC_CLIENT_SECRET'),
        discoveryUrl: url(env, 'OIDC_DISCOVERY_URL'),
        name: s(env, 'OIDC_NAME', 'OIDC'),
      },
      custom: customProviders(env),
    },
    wechat: {
      enabled: flag(env, 'WECHAT_AUTH_ENABLED', Boolean(wechatAddress)),
      serverAddress: wechatAddress,
      serverToken: s(env, 'WECHAT_SERVER_TOKEN'),
      /** The official account's QR code new-api's dashboard shows for WeChat login (AS01 `wechat_qrcode`). */
      qrcodeImageUrl: url(env, 'WECHAT_QRCODE_IMAGE_URL'),
    },
    telegram: {
      botToken: s(env, 'TELEGRAM_BOT_TOKEN'),
      botName: s(env, 'TELEGRAM_BOT_NAME'),
    },
  };
}

export type MailOAuthConfig = ReturnType<typeof loadMailOAuthConfig>;
