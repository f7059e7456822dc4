import crypto from 'node:crypto';
import { bool, ConfigError, int, list, str, type Env } from './read.js';

/**
 * The gateway's relay (src/gateway/relay): who may call its internal API, its deadlines and caps, and the
 * relay log's retention. The internal API is off until a workload-token key is configured.
 */
export function relayConfig(env: Env) {
  const secret = str(env, 'GATEWAY_RELAY_TOKEN_SECRET', '');
  if (secret && Buffer.byteLength(secret) < 32) throw new ConfigError('GATEWAY_RELAY_TOKEN_SECRET must be at least 32 bytes (HS256 key)');
  const publicKey = str(env, 'GATEWAY_RELAY_TOKEN_PUBLIC_KEY', '');
  if (publicKey) {
    let key: crypto.KeyObject;
    try {
      key = crypto.createPublicKey(publicKey.includes('-----BEGIN') ? publicKey : { key: JSON.parse(publicKey), format: 'jwk' });
    } catch {
      throw new ConfigError('GATEWAY_RELAY_TOKEN_PUBLIC_KEY must be an Ed25519 public key (PEM or JWK)');
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError('GATEWAY_RELAY_TOKEN_PUBLIC_KEY must be an Ed25519 public key (EdDSA)');
  }
  return {
    /** HS256 key shared with the callers (edge), or an Ed25519 public key whose private half signs (EdDSA). */
    tokenSecret: secret,
    tokenPublicKey: publicKey,
    /** `iss` values accepted in workload tokens (the calling deployables). */
    tokenIssuers: list(env, 'GATEWAY_RELAY_TOKEN_ISSUERS').length ? list(env, 'GATEWAY_RELAY_TOKEN_ISSUERS') : ['edge'],
    firstByteMs: int(env, 'GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS', 120_000, 100, 3_600_000),
    idleMs: int(env, 'GATEWAY_RELAY_IDLE_TIMEOUT_MS', 60_000, 100, 3_600_000),
    totalMs: int(env, 'GATEWAY_RELAY_TOTAL_TIMEOUT_MS', 600_000, 1000, 6 * 3_600_000),
    maxRequestBytes: int(env, 'GATEWAY_RELAY_MAX_REQUEST_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    /** Largest body of a call with a file (an audio transcription's form, GR16): OpenAI takes files up to 25 MB. */
    maxUploadBytes: int(env, 'GATEWAY_RELAY_MAX_UPLOAD_BYTES', 26 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    maxResponseBytes: int(env, 'GATEWAY_RELAY_MAX_RESPONSE_BYTES', 64 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    /** How long the routing view (abilities, channel rows) and the prices are reused before they are read again. */
    routeCacheMs: int(env, 'GATEWAY_RELAY_ROUTE_CACHE_MS', 1000, 0, 60_000),
    /** Serve models that have no price in the ratio configuration (cost 0) instead of refusing them. */
    allowUnpriced: bool(env, 'GATEWAY_RELAY_ALLOW_UNPRICED', false),
    /** The output tokens a call with a budget (an edge's hold) asks for when its caller set no cap and the budget pays for more. */
    defaultMaxTokens: int(env, 'GATEWAY_RELAY_DEFAULT_MAX_TOKENS', 4096, 1, 1_000_000),
    logRetentionDays: int(env, 'GATEWAY_RELAY_LOG_RETENTION_DAYS', 30, 0, 3650),
    /** The caller group used when a token names none. */
    defaultGroup: str(env, 'GATEWAY_RELAY_DEFAULT_GROUP', 'default'),
    /** Pause before trying the next channel: base · 2^(n-1), capped, with jitter. */
    backoffMs: int(env, 'GATEWAY_RELAY_BACKOFF_MS', 50, 0, 10_000),
    backoffMaxMs: int(env, 'GATEWAY_RELAY_BACKOFF_MAX_MS', 1000, 0, 60_000),
    /** The longest an upstream's Retry-After keeps a channel (or key) out of use. */
    retryAfterMaxSeconds: int(env, 'GATEWAY_RELAY_RETRY_AFTER_MAX_SECONDS', 600, 0, 86_400),
    breaker: breakerConfig(env),
  };
}

/** Failure kinds a breaker may count: an HTTP status class or status, or an error class. */
const BREAKER_KINDS = /^([1-5]xx|[1-5]\d\d|timeout|unreachable|bad_response|stream)$/;

/**
 * The circuit breaker of channels and keys (src/gateway/relay/breaker.ts). A channel's own `settings` may
 * override failures, window and cooldown (breaker_failures, breaker_window_seconds, breaker_cooldown_seconds).
 */
function breakerConfig(env: Env) {
  const counts = list(env, 'GATEWAY_BREAKER_COUNTS').length ? list(env, 'GATEWAY_BREAKER_COUNTS') : ['5xx', '401', '403', '408', 'timeout', 'unreachable', 'bad_response', 'stream'];
  const bad = counts.find((c) => !BREAKER_KINDS.test(c));
  if (bad) throw new ConfigError(`GATEWAY_BREAKER_COUNTS: "${bad}" is not a status (429, 5xx) or one of timeout, unreachable, bad_response, stream`);
  return {
    enabled: bool(env, 'GATEWAY_BREAKER_ENABLED', true),
    failures: int(env, 'GATEWAY_BREAKER_FAILURES', 5, 1, 10_000),
    windowSeconds: int(env, 'GATEWAY_BREAKER_WINDOW_SECONDS', 60, 1, 86_400),
    cooldownSeconds: int(env, 'GATEWAY_BREAKER_COOLDOWN_SECONDS', 30, 1, 86_400),
    maxCooldownSeconds: int(env, 'GATEWAY_BREAKER_MAX_COOLDOWN_SECONDS', 1800, 1, 7 * 86_400),
    /** Real requests let through at once to a channel (or key) whose cooldown has passed. */
    probes: int(env, 'GATEWAY_BREAKER_PROBES', 1, 1, 100),
    counts,
  };
}
