import fs from 'node:fs';
import type { Config } from '../../config/index.js';
import type { Provider } from '../oauth/providers.js';

const VERSION: string = JSON.parse(fs.readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')).version;
const STARTED_AT = Math.floor(Date.now() / 1000);
/** How long AS01 waits for the OIDC provider's discovery document before answering without its endpoint. */
const DISCOVERY_WAIT_MS = 2000;

/** The provider's client id when it is configured, else "" (client ids are public: they go into the authorize URL). */
const clientIdOf = (p: Provider | undefined) => (p?.enabled ? p.client.client_id : '');

/** The provider's authorization endpoint (OIDC: from discovery, cached by the provider), "" while it cannot be had. */
async function authorizationEndpoint(p: Provider | undefined): Promise<string> {
  if (!p?.enabled) return '';
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<null>((resolve) => (timer = setTimeout(() => resolve(null), DISCOVERY_WAIT_MS)));
  try {
    const as = await Promise.race([p.server(), timeout]);
    return as?.authorization_endpoint ?? '';
  } catch {
    return '';
  } finally {
    clearTimeout(timer);
  }
}

/**
 * AS01: what new-api's sign-in page reads from GET /api/status, with the reference's field names, built from
 * configuration only. Never a secret: client ids, the bot's public name and switches; no client secret, bot
 * token or server token. Features of the reference this product does not have are reported off.
 */
export async function systemStatus(cfg: Config, providers: ReadonlyMap<string, Provider>, serverAddress: string) {
  const { wechat, telegram } = cfg.mailOAuth;
  const github = providers.get('github');
  const discord = providers.get('discord');
  const linuxdo = providers.get('linuxdo');
  const oidc = providers.get('oidc');
  const builtIn = new Set(['github', 'discord', 'linuxdo', 'oidc']);
  const custom = [...providers.values()].filter((p) => p.enabled && !builtIn.has(p.slug));
  return {
    version: VERSION,
    start_time: STARTED_AT,
    system_name: cfg.systemName,
    logo: '',
    footer_html: '',
    server_address: serverAddress,
    setup: true,
    register_enabled: cfg.registerEnabled,
    password_login_enabled: cfg.passwordLoginEnabled,
    password_register_enabled: cfg.passwordRegisterEnabled,
    email_verification: cfg.emailVerificationEnabled,
    github_oauth: Boolean(github?.enabled),
    github_client_id: clientIdOf(github),
    discord_oauth: Boolean(discord?.enabled),
    discord_client_id: clientIdOf(discord),
    linuxdo_oauth: Boolean(linuxdo?.enabled),
    linuxdo_client_id: clientIdOf(linuxdo),
    linuxdo_minimum_trust_level: 0,
    oidc_enabled: Boolean(oidc?.enabled),
    oidc_client_id: clientIdOf(oidc),
    oidc_authorization_endpoint: await authorizationEndpoint(oidc),
    custom_oauth_providers: await Promise.all(custom.map(async (p) => ({
      id: p.slug,
      name: p.name,
      slug: p.slug,
      icon: p.icon,
      kind: 'oauth_code',
      client_id: p.client.client_id,
      authorization_endpoint: await authorizationEndpoint(p),
      scopes: p.scope,
      browser_login_supported: true,
    }))),
    telegram_oauth: Boolean(telegram.botToken),
    telegram_bot_name: telegram.botToken ? telegram.botName : '',
    wechat_login: wechat.enabled && Boolean(wechat.serverAddress),
    wechat_qrcode: wechat.qrcodeImageUrl,
    passkey_login: cfg.passkey.enabled,
    passkey_display_name: cfg.passkey.rpName,
    passkey_rp_id: cfg.passkey.rpId,
    turnstile_check: false,
    turnstile_site_key: '',
    user_agreement_enabled: false,
    privacy_policy_enabled: false,
    self_use_mode_enabled: false,
    demo_site_enabled: false,
    checkin_enabled: false,
    // Quota display of the reference (500,000 units = 1 USD); this service keeps no quota (AS03 reports 0).
    quota_per_unit: 500000,
    display_in_currency: true,
    quota_display_type: 'USD',
    top_up_link: '',
    docs_link: '',
  };
}

/** AS02: the reference's setup state. This service needs no setup wizard (root is created with the CLI). */
export function setupState() {
  return { status: true, root_init: true, database_type: '' };
}
