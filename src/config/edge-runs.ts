import crypto from 'node:crypto';
import { bool, ConfigError, int, str, type Env } from './read.js';

/**
 * How the edge executes and bills calls (src/edge/runs, src/edge/openai): where the gateway relay is when it
 * is not in the same process, the run workers, deadlines and the per-owner concurrency cap.
 */
export function edgeRunsConfig(env: Env) {
  const tokenKey = str(env, 'EDGE_RELAY_TOKEN_KEY', '');
  if (tokenKey.includes('-----BEGIN')) {
    let key: crypto.KeyObject;
    try {
      key = crypto.createPrivateKey(tokenKey);
    } catch {
      throw new ConfigError('EDGE_RELAY_TOKEN_KEY must be an HS256 secret or an Ed25519 private key (PEM)');
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError('EDGE_RELAY_TOKEN_KEY: the private key must be Ed25519 (EdDSA)');
  } else if (tokenKey && Buffer.byteLength(tokenKey) < 32) {
    throw new ConfigError('EDGE_RELAY_TOKEN_KEY must be at least 32 bytes (HS256 key)');
  }
  const relayUrl = str(env, 'EDGE_RELAY_URL', '').replace(/\/+$/, '');
  if (relayUrl && !/^https?:\/\/[^/]+$/.test(relayUrl)) throw new ConfigError('EDGE_RELAY_URL must be the gateway listener\'s origin, e.g. http://127.0.0.1:3001');
  return {
    /** The gateway listener whose /relay/v1 API serves calls when the gateway runs in another process. */
    relayUrl,
    /** Signs the workload tokens (HS256 secret shared with GATEWAY_RELAY_TOKEN_SECRET, or an Ed25519 private key). */
    relayTokenKey: tokenKey,
    /** Whether this process executes admitted runs (`cli edge worker` runs one on its own). */
    worker: bool(env, 'EDGE_RUN_WORKER', true),
    workerConcurrency: int(env, 'EDGE_RUN_CONCURRENCY', 4, 1, 256),
    pollMs: int(env, 'EDGE_RUN_POLL_MS', 500, 10, 60_000),
    /** A worker's hold on a run, renewed while it runs; after it a crashed worker's run is taken over. */
    leaseMs: int(env, 'EDGE_RUN_LEASE_MS', 30_000, 500, 3_600_000),
    /** An admitted run not started within this time is released. */
    reservationTtlSeconds: int(env, 'EDGE_RUN_RESERVATION_TTL_SECONDS', 3600, 10, 30 * 86400),
    /** The longest a started call may take before reconciliation may settle it. */
    timeoutMs: int(env, 'EDGE_RUN_TIMEOUT_MS', 900_000, 1000, 24 * 3_600_000),
    /** Largest body of an OpenAI-compatible call (E01 with an OpenAI body, E04, E05). */
    maxRequestBytes: int(env, 'EDGE_MAX_REQUEST_BYTES', 16 * 1024 * 1024, 1024, 256 * 1024 * 1024),
    /** Largest body of a call with a file (an audio transcription's form, E17): OpenAI takes files up to 25 MB. */
    maxUploadBytes: int(env, 'EDGE_MAX_UPLOAD_BYTES', 26 * 1024 * 1024, 1024, 1024 * 1024 * 1024),
    /** Calls of one owner in flight at once (admitted runs being executed are not counted). */
    ownerConcurrency: int(env, 'EDGE_OWNER_CONCURRENCY', 16, 1, 100_000),
  };
}
