import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { loadMailOAuthConfig } from './mail-oauth.js';
import { relayConfig } from './relay.js';
import { edgeRunsConfig } from './edge-runs.js';
import { accountEdgeConfig, edgeCustomerApiConfig } from './customer-api.js';
import { operationPermissionOverrides } from './operation-permissions.js';
import { channelTestConfig, GATEWAY_PERMISSIONS, gatewayPermissions, upstreamConfig } from './gateway.js';
import { bool, ConfigError, int, list, str, type Env } from './read.js';

function oneOf<T extends string>(env: Env, name: string, def: T, allowed: readonly T[]): T {
  const v = str(env, name, def) as T;
  if (!allowed.includes(v)) throw new ConfigError(`${name} must be one of ${allowed.join(', ')}, got "${v}"`);
  return v;
}

function databaseUrl(env: Env, name: string, dataDir: string, file: string): string {
  const v = str(env, name, '');
  if (!v) return `sqlite://${path.join(dataDir, file)}`;
  if (!/^(sqlite|postgres|postgresql|mysql):\/\//.test(v)) {
    throw new ConfigError(`${name} must start with sqlite://, postgres:// or mysql://`);
  }
  return v;
}

/** A public http(s) base URL without a trailing slash; '' when unset. */
function publicUrl(env: Env, name: string): string {
  const v = str(env, name, '').trim().replace(/\/+$/, '');
  if (!v) return '';
  let u: URL;
  try {
    u = new URL(v);
  } catch {
    throw new ConfigError(`${name} must be an http(s) URL, got "${v}"`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.search || u.hash || u.username || u.password) {
    throw new ConfigError(`${name} must be an http(s) URL without query, fragment or credentials, got "${v}"`);
  }
  return v;
}

function origins(env: Env, name: string): string[] {
  const values = list(env, name);
  for (const o of values) {
    let u: URL;
    try {
      u = new URL(o);
    } catch {
      throw new ConfigError(`${name} must be a comma list of exact origins, "${o}" is not a URL`);
    }
    if (u.origin !== o) throw new ConfigError(`${name} must list exact origins (scheme://host[:port]), got "${o}"`);
  }
  return values;
}

function passkeyConfig(env: Env) {
  const enabled = bool(env, 'PASSKEY_ENABLED', false);
  const rpId = str(env, 'PASSKEY_RP_ID', '').trim().toLowerCase();
  const rpOrigins = origins(env, 'PASSKEY_ORIGINS');
  if (enabled && !rpId) throw new ConfigError('PASSKEY_RP_ID is required when PASSKEY_ENABLED=true');
  if (rpId && !/^[a-z0-9.-]+$/.test(rpId)) throw new ConfigError(`PASSKEY_RP_ID must be a bare host name, got "${rpId}"`);
  if (enabled && rpOrigins.length === 0) throw new ConfigError('PASSKEY_ORIGINS is required when PASSKEY_ENABLED=true');
  return { enabled, rpId, rpName: str(env, 'PASSKEY_RP_NAME', 'New API'), origins: rpOrigins };
}

/** The edge deployable (SPEC's archived machine-facing public API): listener, database, dispatcher. */
function edgeConfig(env: Env, dataDir: string) {
  const secretKey = str(env, 'EDGE_SECRET_KEY', '');
  if (secretKey && !/^[0-9a-fA-F]{64}$/.test(secretKey)) throw new ConfigError('EDGE_SECRET_KEY must be 64 hex characters (32 bytes)');
  const webhookTimeoutMs = int(env, 'EDGE_WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000);
  const leaseMs = int(env, 'EDGE_DISPATCH_LEASE_MS', 60_000, 500, 3_600_000);
  if (leaseMs <= webhookTimeoutMs) throw new ConfigError('EDGE_DISPATCH_LEASE_MS must be longer than EDGE_WEBHOOK_TIMEOUT_MS');
  return {
    host: str(env, 'EDGE_HOST', '127.0.0.1'),
    port: int(env, 'EDGE_PORT', 3002, 0, 65535),
    admissionMode: oneOf(env, 'PUBLIC_ADMISSION_MODE', 'disabled', ['disabled', 'controlled'] as const),
    databaseUrl: databaseUrl(env, 'EDGE_DATABASE_URL', dataDir, 'edge.sqlite'),
    /** Seals webhook signing secrets at rest; empty = a key file in DATA_DIR (edge-secret.key). */
    secretKey,
    idempotencyTtlSeconds: int(env, 'EDGE_IDEMPOTENCY_TTL_SECONDS', 86400, 60, 2592000),
    /** Requests per minute per developer key on /v1 routes. */
    rateLimitPerMinute: int(env, 'EDGE_RATE_LIMIT_PER_MINUTE', 600, 1, 1_000_000),
    dispatcher: {
      /** Whether the edge process runs a webhook dispatcher (`cli edge dispatch` runs one on its own). */
      enabled: bool(env, 'EDGE_DISPATCHER', true),
      intervalMs: int(env, 'EDGE_DISPATCH_INTERVAL_MS', 1000, 10, 600_000),
      leaseMs,
      batch: int(env, 'EDGE_DISPATCH_BATCH', 20, 1, 1000),
    },
    runs: edgeRunsConfig(env),
    /** The internal customer API the account service calls when it runs apart (src/config/customer-api.ts). */
    customerApi: edgeCustomerApiConfig(env),
    webhook: {
      timeoutMs: webhookTimeoutMs,
      maxAttempts: int(env, 'EDGE_WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
      backoffMs: int(env, 'EDGE_WEBHOOK_BACKOFF_MS', 2000, 1, 3_600_000),
      backoffMaxMs: int(env, 'EDGE_WEBHOOK_BACKOFF_MAX_MS', 3_600_000, 1, 86_400_000),
      /** Lets webhook URLs reach private and loopback addresses (tests, a receiver on the same host). */
      allowPrivate: bool(env, 'EDGE_WEBHOOK_ALLOW_PRIVATE', false),
    },
  };
}

export const SERVICES = ['account', 'gateway', 'edge'] as const;
export type ServiceName = (typeof SERVICES)[number];

/**
 * Typed configuration read from the environment. Every variable is listed in docs/configuration.md;
 * a bad value fails start-up with a message naming the variable.
 */
export function loadConfig(env: Env = process.env) {
  const production = env.NODE_ENV === 'production';
  const dataDir = path.resolve(str(env, 'DATA_DIR', './data'));
  const services = list(env, 'SERVICES').length ? list(env, 'SERVICES') : ['account', 'gateway'];
  for (const s of services) {
    if (!SERVICES.includes(s as ServiceName)) throw new ConfigError(`SERVICES: unknown service "${s}"`);
  }
  const redisUrl = str(env, 'REDIS_URL', '');
  if (redisUrl && !/^rediss?:\/\//.test(redisUrl)) throw new ConfigError('REDIS_URL must start with redis:// or rediss://');
  const sessionSecret = str(env, 'SESSION_SECRET', '');
  if (production && !sessionSecret) throw new ConfigError('SESSION_SECRET is required when NODE_ENV=production');
  if (sessionSecret && sessionSecret.length < 32) throw new ConfigError('SESSION_SECRET must be at least 32 characters');
  const opsToken = str(env, 'OPS_TOKEN', '');
  if (opsToken && opsToken.length < 32) throw new ConfigError('OPS_TOKEN must be at least 32 characters');
  const gatewaySecretKey = str(env, 'GATEWAY_SECRET_KEY', '');
  if (gatewaySecretKey && !/^[0-9a-fA-F]{64}$/.test(gatewaySecretKey)) {
    throw new ConfigError('GATEWAY_SECRET_KEY must be 64 hex characters (32 bytes)');
  }

  return {
    production,
    services: services as ServiceName[],
    dataDir,
    logLevel: oneOf(env, 'LOG_LEVEL', 'info', ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const),
    logBufferBytes: int(env, 'LOG_BUFFER_BYTES', 4096, 0, 1048576),
    account: {
      host: str(env, 'ACCOUNT_HOST', '0.0.0.0'),
      port: int(env, 'ACCOUNT_PORT', 3000, 0, 65535),
      databaseUrl: databaseUrl(env, 'ACCOUNT_DATABASE_URL', dataDir, 'account.sqlite'),
      /** The edge's customer API when the edge is not in this process (src/config/customer-api.ts). */
      edge: accountEdgeConfig(env),
    },
    gateway: {
      host: str(env, 'GATEWAY_HOST', '127.0.0.1'),
      port: int(env, 'GATEWAY_PORT', 3001, 0, 65535),
      databaseUrl: databaseUrl(env, 'GATEWAY_DATABASE_URL', dataDir, 'gateway.sqlite'),
      secretKey: gatewaySecretKey,
      adminPermissions: gatewayPermissions(env, 'GATEWAY_ADMIN_PERMISSIONS', 'authz.ChannelRead,authz.ChannelOperate,authz.ChannelWrite'),
      /** Overrides of the registry's operatorPermission (prefill groups, deployments, G60): id → permission or null. */
      operationPermissions: operationPermissionOverrides(env, GATEWAY_PERMISSIONS, (m) => new ConfigError(m)),
      /** Channels tried after the first one fails before any output (the relay; G26 reports it). */
      retryTimes: int(env, 'GATEWAY_RETRY_TIMES', 2, 0, 10),
      /** The data plane: internal API, deadlines, caps, relay log (src/config/relay.ts). */
      relay: relayConfig(env),
      idempotencyTtlSeconds: int(env, 'IDEMPOTENCY_TTL_SECONDS', 86400, 60, 2592000),
      sqliteCacheMb: int(env, 'GATEWAY_SQLITE_CACHE_MB', 64, 2, 65536),
      sqliteReadThread: bool(env, 'GATEWAY_SQLITE_READ_THREAD', true),
      jobLeaseSeconds: int(env, 'GATEWAY_JOB_LEASE_SECONDS', 60, 3, 3600),
      /** Channel tests (G33, G34) and the automatic disable / enable rules applied to G33's results. */
      channelTest: channelTestConfig(env),
      /** Coder (Codex) channels' OAuth refresh (G06, and G07–G09 after a 401). */
      coder: {
        tokenUrl: str(env, 'GATEWAY_CODER_TOKEN_URL', 'https://auth.openai.com/oauth/token'),
        clientId: str(env, 'GATEWAY_CODER_CLIENT_ID', 'app_EMoamEEZ73f0CkXaXp7hrann'),
      },
      /** Model deployments on io.net (G41–G59). */
      ionet: {
        baseUrl: str(env, 'GATEWAY_IONET_BASE_URL', 'https://api.io.solutions/enterprise/v1/io-cloud/caas'),
        timeoutMs: int(env, 'GATEWAY_IONET_TIMEOUT_MS', 30_000, 100, 600_000),
        logIdleMs: int(env, 'GATEWAY_IONET_LOG_IDLE_MS', 60_000, 100, 3_600_000),
        logFollowMs: int(env, 'GATEWAY_IONET_LOG_FOLLOW_MS', 3_600_000, 1000, 6 * 3_600_000),
      },
      /** Ollama local-model operations (G22–G25). */
      ollama: {
        pullTimeoutMs: int(env, 'GATEWAY_OLLAMA_PULL_TIMEOUT_MS', 30 * 60_000, 1000, 6 * 3600_000),
        streamTimeoutMs: int(env, 'GATEWAY_OLLAMA_STREAM_TIMEOUT_MS', 3600_000, 1000, 6 * 3600_000),
        streamIdleMs: int(env, 'GATEWAY_OLLAMA_STREAM_IDLE_MS', 5 * 60_000, 100, 3600_000),
      },
      /** Upstream model-update detection (G40 and its periodic run). */
      modelUpdate: {
        minIntervalSeconds: int(env, 'GATEWAY_MODEL_UPDATE_MIN_INTERVAL_SECONDS', 300, 0, 30 * 86400),
        concurrency: int(env, 'GATEWAY_MODEL_UPDATE_CONCURRENCY', 4, 1, 64),
        intervalMinutes: int(env, 'GATEWAY_MODEL_UPDATE_INTERVAL_MINUTES', 30, 0, 7 * 1440),
      },
      /** Outgoing requests to upstreams (src/kit/upstream): address policy, deadline, body cap. */
      upstream: upstreamConfig(env),
      /** Installed task plugins: <dir>/<key>/<version>/ (see src/gateway/plugins/). */
      pluginDir: path.resolve(str(env, 'GATEWAY_PLUGIN_DIR', path.join(dataDir, 'plugins'))),
      /** Whether the plugins shipped in the repository's plugins/ folder (the factory layer) are loaded. */
      pluginFactory: bool(env, 'GATEWAY_PLUGIN_FACTORY', true),
      /** Queued + running plugin tasks one identity may have at a time (all plugins together). */
      pluginMaxInFlight: int(env, 'GATEWAY_PLUGIN_MAX_IN_FLIGHT', 20, 1, 100000),
    },
    edge: edgeConfig(env, dataDir),
    redisUrl,
    redisKeyPrefix: str(env, 'REDIS_KEY_PREFIX', ''),
    sessionSecret,
    sessionCookieSecure: bool(env, 'SESSION_COOKIE_SECURE', false),
    sessionTrustedOrigins: origins(env, 'SESSION_TRUSTED_ORIGINS'),
    trustProxy: bool(env, 'TRUST_PROXY', false),
    /** Bearer token for /metrics and /api/openapi.json; empty: they answer direct loopback peers only. */
    opsToken,
    /** Folder of the web console builds (<dir>/account, <dir>/gateway); empty: web/dist of the checkout. */
    consoleDir: str(env, 'CONSOLE_DIR', '') ? path.resolve(str(env, 'CONSOLE_DIR', '')) : '',
    passwordLoginEnabled: bool(env, 'PASSWORD_LOGIN_ENABLED', true),
    passwordLoginEncryptionEnabled: bool(env, 'PASSWORD_LOGIN_ENCRYPTION_ENABLED', false),
    registerEnabled: bool(env, 'REGISTER_ENABLED', true),
    passwordRegisterEnabled: bool(env, 'PASSWORD_REGISTER_ENABLED', true),
    emailVerificationEnabled: bool(env, 'EMAIL_VERIFICATION_ENABLED', false),
    /** Wallet units a new account user starts with (new-api's QuotaForNewUser; 500,000 units = 1 USD). */
    quotaForNewUser: int(env, 'QUOTA_FOR_NEW_USER', 0, 0, 500_000_000_000_000),
    /**
     * Where customers reach the edge (their SDKs' base URL without /v1): the account console's key snippets and
     * playground use it. Empty: the console's own origin (a reverse proxy sends /v1 to the edge, as new-api serves both).
     */
    edgePublicUrl: publicUrl(env, 'EDGE_PUBLIC_URL'),
    /** Extra words (organisation, brand) a new password must not be, give or take digits and symbols. */
    passwordContextWords: list(env, 'PASSWORD_CONTEXT_WORDS'),
    sessions: {
      activeLimit: int(env, 'USER_SESSION_ACTIVE_LIMIT', 50, 1),
      issuanceLimit: int(env, 'USER_SESSION_ISSUANCE_LIMIT', 100, 1),
      issuanceWindowSeconds: int(env, 'USER_SESSION_ISSUANCE_WINDOW_SECONDS', 86400, 1),
      limitPolicy: oneOf(env, 'USER_SESSION_LIMIT_POLICY', 'reject', ['reject', 'evict_oldest'] as const),
      accessTokenTtlSeconds: int(env, 'ACCESS_TOKEN_TTL_SECONDS', 900, 30, 86400),
      sessionTtlSeconds: int(env, 'SESSION_TTL_SECONDS', 2592000, 60),
      idleTimeoutSeconds: int(env, 'SESSION_IDLE_TIMEOUT_SECONDS', 604800, 60),
      refreshReuseGraceSeconds: int(env, 'REFRESH_REUSE_GRACE_SECONDS', 30, 0, 3600),
    },
    rateLimit: {
      criticalEnabled: bool(env, 'CRITICAL_RATE_LIMIT_ENABLED', true),
      critical: int(env, 'CRITICAL_RATE_LIMIT', 20, 1),
      criticalDuration: int(env, 'CRITICAL_RATE_LIMIT_DURATION', 1200, 1),
      refresh: int(env, 'AUTH_REFRESH_RATE_LIMIT', 120, 1),
      refreshDuration: int(env, 'AUTH_REFRESH_RATE_LIMIT_DURATION', 1200, 1),
    },
    enabledOperations: list(env, 'ENABLED_OPERATIONS'),
    explicitIdentity: bool(env, 'EXPLICIT_IDENTITY', false),
    bodyLimitBytes: int(env, 'BODY_LIMIT_BYTES', 262144, 1024, 64 * 1024 * 1024),
    /** How deep arrays and objects of a JSON body may nest; above ~1000 JSON.stringify nears a stack overflow. */
    bodyMaxDepth: int(env, 'BODY_MAX_DEPTH', 128, 8, 1000),
    securityProofTtlSeconds: int(env, 'SECURITY_PROOF_TTL_SECONDS', 300, 10, 3600),
    totpIssuer: str(env, 'TOTP_ISSUER', 'New API'),
    /** The site name new-api's dashboard shows (AS01 `system_name`). */
    systemName: str(env, 'SYSTEM_NAME', 'New API'),
    securityRateLimit: int(env, 'SECURITY_RATE_LIMIT', 30, 1),
    securityRateLimitDuration: int(env, 'SECURITY_RATE_LIMIT_DURATION', 300, 1),
    /** Reads of the second-factor state (A17, A34, A48): their own per-user budget, apart from the verifying routes'. */
    securityReadRateLimit: int(env, 'SECURITY_READ_RATE_LIMIT', 300, 1),
    securityReadRateLimitDuration: int(env, 'SECURITY_READ_RATE_LIMIT_DURATION', 300, 1),
    /** How long after its sign-in a session may add a factor of a kind the user lacks without a proof (A15, A37; GitHub's sudo mode); 0 = never. */
    securityRecentLoginSeconds: int(env, 'SECURITY_RECENT_LOGIN_SECONDS', 300, 0, 900),
    passkey: passkeyConfig(env),
    /** Mail, email codes, password reset, OAuth/WeChat/Telegram providers (src/config/mail-oauth.ts). */
    mailOAuth: loadMailOAuthConfig(env),
  };
}

export type Config = ReturnType<typeof loadConfig>;

/**
 * Returns a secret kept in DATA_DIR (created once with mode 0600) so restarts keep sessions valid.
 */
export function persistentSecret(dataDir: string, file: string, bytes = 32): string {
  const p = path.join(dataDir, file);
  try {
    return fs.readFileSync(p, 'utf8').trim();
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }
  fs.mkdirSync(dataDir, { recursive: true });
  const value = crypto.randomBytes(bytes).toString('hex');
  // Written in full under a name of its own, then linked into place: a process starting alongside never
  // reads a created but still empty file, and the first link wins.
  const staged = `${p}.${process.pid}.${crypto.randomBytes(4).toString('hex')}`;
  fs.writeFileSync(staged, value + '\n', { mode: 0o600, flag: 'wx' });
  try {
    fs.linkSync(staged, p);
    return value;
  } catch (e) {
    // Another process created it first: use theirs.
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return fs.readFileSync(p, 'utf8').trim();
    throw e;
  } finally {
    fs.rmSync(staged, { force: true });
  }
}
