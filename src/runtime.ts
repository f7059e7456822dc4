import type { Logger } from 'pino';
import { connectRedis, type Redis } from './kit/cache/redis.js';
import { memoryBus, redisBus, type Bus } from './kit/cache/bus.js';
import { memoryRateLimiter, redisRateLimiter, type RateLimiter } from './kit/ratelimit/index.js';
import { createLogger, stdoutDestination } from './kit/log/logger.js';
import type { Config } from './config/index.js';
import type { DestinationStream } from 'pino';

/**
 * Process-wide infrastructure shared by the deployables of one process: the logger and, when REDIS_URL
 * is set, one Redis connection for rate limits and invalidation messages (in-process otherwise).
 */
export interface Runtime {
  log: Logger;
  redis?: Redis;
  bus: Bus;
  limiter(prefix: string): RateLimiter;
  close(): Promise<void>;
}

export function createRuntime(config: Config, logStream?: DestinationStream): Runtime {
  const log = createLogger(config.logLevel, logStream ?? stdoutDestination(config.logBufferBytes));
  if (!config.redisUrl) {
    const bus = memoryBus();
    const limiter = memoryRateLimiter();
    return { log, bus, limiter: () => limiter, close: () => bus.close() };
  }
  const redis = connectRedis(config.redisUrl);
  redis.on('error', (e: Error) => log.warn({ err: { message: e.message } }, 'redis connection error'));
  const p = config.redisKeyPrefix;
  const raw = redisBus(redis);
  const bus: Bus = {
    publish: (channel, message) => raw.publish(p + channel, message),
    subscribe: (channel, handler) => raw.subscribe(p + channel, handler),
    close: () => raw.close(),
  };
  return {
    log,
    redis,
    bus,
    limiter: (prefix) => redisRateLimiter(redis, p + prefix),
    async close() {
      await bus.close();
      redis.disconnect();
    },
  };
}
