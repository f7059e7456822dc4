import { createRequire } from 'node:module';
import type { Redis } from 'ioredis';

const require = createRequire(import.meta.url);

/** Opens a Redis connection that fails fast instead of queueing commands forever while Redis is down. */
export function connectRedis(url: string): Redis {
  // Loaded on first use: a process without REDIS_URL (the CLI, the embedded default) never loads ioredis.
  const { Redis } = require('ioredis') as typeof import('ioredis');
  return new Redis(url, { maxRetriesPerRequest: 2, enableOfflineQueue: true, lazyConnect: false });
}

export type { Redis };
