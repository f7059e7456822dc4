import fs from 'node:fs';
import path from 'node:path';
import type { FastifyRequest } from 'fastify';
import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import type { Database } from '../kit/db/index.js';
import type { GatewayDB } from './db.js';
import type { UpstreamClient } from '../kit/upstream/client.js';
import type { ByteBudget } from '../kit/upstream/budget.js';
import type { GatewayMetrics } from './metrics.js';

export const SECRET_KEY_FILE = 'gateway-secret.key';

/** Everything a gateway operation needs; built once per app. */
export interface GatewayContext {
  config: Config;
  database: Database<GatewayDB>;
  db: Database<GatewayDB>['db'];
  log: Logger;
  /** AES-256-GCM key for channel keys and TOTP secrets at rest, checked against the database (sealing.ts). */
  secretKey: Buffer;
  installationId: string;
  /** Outgoing HTTP to upstream suppliers, under the configured address policy, deadline and body cap. */
  upstream: UpstreamClient;
  /** Bytes of upstream answers held at once by every upstream client of this gateway (GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES). */
  upstreamBudget: ByteBudget;
  /** Domain metrics (supplier calls, channel tests, jobs, channel gauges); published by the app's /metrics. */
  metrics: GatewayMetrics;
}

/**
 * Key rotation in two steps around the re-encryption transaction: the new key is first saved beside the
 * old one (`gateway-secret.key.new`, 0600), and only after the commit moved over it. A crash in between
 * leaves the new key on disk: if the data was already re-sealed, rename the .new file by hand.
 */
export function stageSecretKeyFile(config: Config, hex: string) {
  fs.writeFileSync(path.join(config.dataDir, SECRET_KEY_FILE) + '.new', hex + '\n', { mode: 0o600 });
}

export function commitSecretKeyFile(config: Config) {
  const p = path.join(config.dataDir, SECRET_KEY_FILE);
  fs.renameSync(p + '.new', p);
}

declare module 'fastify' {
  interface FastifyInstance {
    gateway: GatewayContext;
  }
}

export function gatewayOf(req: FastifyRequest): GatewayContext {
  return req.server.gateway;
}
