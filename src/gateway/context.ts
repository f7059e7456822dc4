import fs from 'node:fs';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import { persistentSecret, type Config } from '../config/index.js';
import type { Database } from '../kit/db/index.js';
import type { GatewayDB } from './db.js';
import type { StaffIdentity } from './staff/service.js';

export const SECRET_KEY_FILE = 'gateway-secret.key';

/** Everything a gateway operation needs; built once per app. */
export interface GatewayContext {
  config: Config;
  database: Database<GatewayDB>;
  db: Database<GatewayDB>['db'];
  log: Logger;
  /** AES-256-GCM key for channel keys and TOTP secrets at rest. */
  secretKey: Buffer;
  installationId: string;
}

/**
 * The key sealing channel keys: GATEWAY_SECRET_KEY when set, otherwise a random key generated once into
 * DATA_DIR/gateway-secret.key with mode 0600.
 */
export function gatewaySecretKey(config: Config): Buffer {
  const hex = config.gateway.secretKey || persistentSecret(config.dataDir, SECRET_KEY_FILE, 32);
  return Buffer.from(hex, 'hex');
}

/** Replaces the generated key file (used by the re-encryption command after re-sealing everything). */
export function writeSecretKeyFile(config: Config, hex: string) {
  const p = path.join(config.dataDir, SECRET_KEY_FILE);
  fs.writeFileSync(p + '.new', hex + '\n', { mode: 0o600 });
  fs.renameSync(p + '.new', p);
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayContext;
  }
  interface FastifyRequest {
    gatewayIdentity?: StaffIdentity;
  }
}

export function gatewayOf(req: FastifyRequest): GatewayContext {
  return req.server.gateway;
}
