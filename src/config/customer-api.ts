import crypto from 'node:crypto';
import { ConfigError, int, str, type Env } from './read.js';

/** An HS256 secret (at least 32 bytes) or an Ed25519 private key (PEM) that signs workload tokens. */
function signingKeyVar(env: Env, name: string): string {
  const key = str(env, name, '');
  if (key.includes('-----BEGIN')) {
    let parsed: crypto.KeyObject;
    try {
      parsed = crypto.createPrivateKey(key);
    } catch {
      throw new ConfigError(`${name} must be an HS256 secret or an Ed25519 private key (PEM)`);
    }
    if (parsed.asymmetricKeyType !== 'ed25519') throw new ConfigError(`${name}: the private key must be Ed25519 (EdDSA)`);
  } else if (key && Buffer.byteLength(key) < 32) {
    throw new ConfigError(`${name} must be at least 32 bytes (HS256 key)`);
  }
  return key;
}

/**
 * The edge's internal customer API (ER01, src/edge/customers/internal): the keys that verify the account
 * service's workload tokens. Off (503) until one is set.
 */
export function edgeCustomerApiConfig(env: Env) {
  const secret = str(env, 'EDGE_CUSTOMER_TOKEN_SECRET', '');
  if (secret && Buffer.byteLength(secret) < 32) throw new ConfigError('EDGE_CUSTOMER_TOKEN_SECRET must be at least 32 bytes (HS256 key)');
  const publicKey = str(env, 'EDGE_CUSTOMER_TOKEN_PUBLIC_KEY', '');
  if (publicKey) {
    let key: crypto.KeyObject;
    try {
      key = crypto.createPublicKey(publicKey.includes('-----BEGIN') ? publicKey : { key: JSON.parse(publicKey), format: 'jwk' });
    } catch {
      throw new ConfigError('EDGE_CUSTOMER_TOKEN_PUBLIC_KEY must be an Ed25519 public key (PEM or JWK)');
    }
    if (key.asymmetricKeyType !== 'ed25519') throw new ConfigError('EDGE_CUSTOMER_TOKEN_PUBLIC_KEY must be an Ed25519 public key (EdDSA)');
  }
  return {
    /** HS256 key shared with the account service (ACCOUNT_EDGE_TOKEN_KEY). */
    tokenSecret: secret,
    /** Ed25519 public key (PEM or JWK) whose private half the account service signs with. */
    tokenPublicKey: publicKey,
  };
}

/**
 * How the account service reaches the edge's customer port when the edge runs in another process: the edge
 * listener's origin and the key that signs the workload tokens (src/account/customers/http-port.ts).
 */
export function accountEdgeConfig(env: Env) {
  const url = str(env, 'ACCOUNT_EDGE_URL', '').replace(/\/+$/, '');
  if (url && !/^https?:\/\/[^/]+$/.test(url)) throw new ConfigError("ACCOUNT_EDGE_URL must be the edge listener's origin, e.g. http://127.0.0.1:3002");
  const tokenKey = signingKeyVar(env, 'ACCOUNT_EDGE_TOKEN_KEY');
  if (url && !tokenKey) throw new ConfigError('ACCOUNT_EDGE_TOKEN_KEY is required when ACCOUNT_EDGE_URL is set');
  return {
    url,
    tokenKey,
    /** The longest one call of the edge's customer API may take (connect, answer and body). */
    timeoutMs: int(env, 'ACCOUNT_EDGE_TIMEOUT_MS', 10_000, 100, 300_000),
  };
}
