import type { Logger } from 'pino';
import type { Config } from '../config/index.js';
import { persistentSecret } from '../config/index.js';
import type { Database } from '../kit/db/index.js';
import type { UpstreamClient } from '../kit/upstream/client.js';
import type { EdgeDB } from './db.js';
import type { EdgeMetrics } from './metrics.js';
import type { LedgerWriter } from './runs/ledger.js';

export const EDGE_SECRET_KEY_FILE = 'edge-secret.key';

/** Everything an edge operation, the dispatcher and the CLI need; built once per process. */
export interface EdgeContext {
  config: Config;
  database: Database<EdgeDB>;
  db: Database<EdgeDB>['db'];
  log: Logger;
  /** AES-256-GCM key sealing webhook signing secrets at rest (EDGE_SECRET_KEY or DATA_DIR/edge-secret.key). */
  secretKey: Buffer;
  /** Outgoing webhook deliveries, under the edge's address policy (EDGE_WEBHOOK_ALLOW_PRIVATE). */
  upstream: UpstreamClient;
  /** Admissions, reservations, settlements, webhook deliveries, the run worker and the outbox backlog; published by the app's /metrics. */
  metrics: EdgeMetrics;
  /** Reservations and settlements, committed in groups (runs/ledger.ts); closed with the context. */
  ledger: LedgerWriter;
}

export function edgeSecretKey(config: Config): Buffer {
  const hex = config.edge.secretKey || persistentSecret(config.dataDir, EDGE_SECRET_KEY_FILE);
  return Buffer.from(hex, 'hex');
}

declare module 'fastify' {
  interface FastifyInstance {
    edge: EdgeContext;
  }
}
