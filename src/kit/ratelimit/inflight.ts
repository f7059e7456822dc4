import type { Redis } from 'ioredis';

/**
 * Counts what is in flight per key, shared across instances through Redis (in-process otherwise). A
 * Redis counter also expires `ttlSeconds` after its last change, so a crashed instance's holds do not
 * stay counted for ever.
 */
export interface InFlight {
  /** Takes a slot when fewer than `limit` are held; answers whether it did. */
  acquire(key: string, limit: number): Promise<boolean>;
  release(key: string): Promise<void>;
}

export function memoryInFlight(): InFlight {
  const held = new Map<string, number>();
  return {
    async acquire(key, limit) {
      const n = held.get(key) ?? 0;
      if (n >= limit) return false;
      held.set(key, n + 1);
      return true;
    },
    async release(key) {
      const n = (held.get(key) ?? 1) - 1;
      if (n <= 0) held.delete(key);
      else held.set(key, n);
    },
  };
}

const ACQUIRE = `local n = redis.call('INCR', KEYS[1])
redis.call('EXPIRE', KEYS[1], ARGV[2])
if n > tonumber(ARGV[1]) then redis.call('DECR', KEYS[1]) return 0 end
return 1`;

const RELEASE = `local n = redis.call('DECR', KEYS[1])
if n <= 0 then redis.call('DEL', KEYS[1]) end
return n`;

export function redisInFlight(redis: Redis, prefix: string, ttlSeconds = 900): InFlight {
  return {
    async acquire(key, limit) {
      return (await redis.eval(ACQUIRE, 1, prefix + key, limit, ttlSeconds)) === 1;
    },
    async release(key) {
      await redis.eval(RELEASE, 1, prefix + key);
    },
  };
}
