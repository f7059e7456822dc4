import { invalidAllowEntry } from '../kit/upstream/address-policy.js';
import { bool, ConfigError, int, list, str, type Env } from './read.js';

// The gateway's settings of its own: staff permissions, upstream calls, channel tests and automatic disabling.

/** The permission names staff roles map to (SPEC's authz.*). */
export const GATEWAY_PERMISSIONS = [
  'authz.ChannelRead',
  'authz.ChannelWrite',
  'authz.ChannelSensitiveWrite',
  'authz.ChannelOperate',
  'authz.TaskPluginBind',
] as const;

export function gatewayPermissions(env: Env, name: string, def: string): string[] {
  const values = str(env, name, def) === 'none' ? [] : list({ [name]: str(env, name, def) }, name);
  for (const p of values) {
    if (!(GATEWAY_PERMISSIONS as readonly string[]).includes(p)) {
      throw new ConfigError(`${name}: unknown permission "${p}" (known: ${GATEWAY_PERMISSIONS.join(', ')}, or "none")`);
    }
  }
  return values;
}

export function upstreamConfig(env: Env) {
  const allow = list(env, 'GATEWAY_UPSTREAM_ALLOW_LIST');
  const bad = invalidAllowEntry(allow);
  if (bad) throw new ConfigError(`GATEWAY_UPSTREAM_ALLOW_LIST: "${bad}" is not a host name, *.suffix, IP address or CIDR`);
  return {
    allowPrivate: bool(env, 'GATEWAY_UPSTREAM_ALLOW_PRIVATE', false),
    allow,
    timeoutMs: int(env, 'GATEWAY_UPSTREAM_TIMEOUT_MS', 30000, 100, 600000),
    maxBytes: int(env, 'GATEWAY_UPSTREAM_MAX_BYTES', 10 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    /** Bytes of whole upstream answers (relay included) the gateway holds in memory at once, over every call. */
    maxBufferedBytes: int(env, 'GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES', 256 * 1024 * 1024, 1024 * 1024, 64 * 1024 * 1024 * 1024),
  };
}

/** The reference's AutomaticDisableKeywords (case-insensitive substrings of an upstream error message). */
const DISABLE_KEYWORDS = [
  'Your credit balance is too low',
  'This organization has been disabled.',
  'You exceeded your current quota',
  'Permission denied',
  'The security token included in the request is invalid',
  'Operation not allowed',
  'Your account is not authorized',
];

export function channelTestConfig(env: Env) {
  const codes = list(env, 'GATEWAY_AUTO_DISABLE_STATUS_CODES').length ? list(env, 'GATEWAY_AUTO_DISABLE_STATUS_CODES') : ['401'];
  for (const c of codes) if (!/^[1-5]\d\d$/.test(c)) throw new ConfigError(`GATEWAY_AUTO_DISABLE_STATUS_CODES: "${c}" is not an HTTP status`);
  const keywords = env.GATEWAY_AUTO_DISABLE_KEYWORDS === undefined ? DISABLE_KEYWORDS : env.GATEWAY_AUTO_DISABLE_KEYWORDS.split('|').map((k) => k.trim()).filter(Boolean);
  return {
    concurrency: int(env, 'GATEWAY_CHANNEL_TEST_CONCURRENCY', 8, 1, 256),
    intervalMs: int(env, 'GATEWAY_CHANNEL_TEST_INTERVAL_MS', 0, 0, 60000),
    autoDisable: bool(env, 'GATEWAY_AUTO_DISABLE_CHANNEL', false),
    autoEnable: bool(env, 'GATEWAY_AUTO_ENABLE_CHANNEL', false),
    disableThresholdSeconds: int(env, 'GATEWAY_CHANNEL_DISABLE_THRESHOLD_SECONDS', 5, 0, 3600),
    disableStatusCodes: codes.map(Number),
    disableKeywords: keywords.map((k) => k.toLowerCase()),
  };
}
