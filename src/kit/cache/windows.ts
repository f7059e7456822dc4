import type { Redis } from 'ioredis';

/**
 * Counters over fixed windows (a window starts with its first hit and lasts `windowSeconds`) and keys
 * blocked until a time, shared across instances through Redis, in this process otherwise.
 */
export interface Windows {
  /** Adds one to the key's count in its current window; answers the count. */
  hit(key: string, windowSeconds: number): Promise<number>;
  clear(key: string): Promise<void>;
  /** Blocks the key until `untilMs` (a later block wins). */
  block(key: string, untilMs: number): Promise<void>;
  /** Which of these keys are blocked now. */
  blocked(keys: string[]): Promise<Set<string>>;
}

export function memoryWindows(): Windows {
  const counts = new Map<string, { n: number; ends: number }>();
  const blocks = new Map<string, number>();
  return {
    async hit(key, windowSeconds) {
      const now = Date.now();
      let c = counts.get(key);
      if (!c || c.ends <= now) counts.set(key, (c = { n: 0, ends: now + windowSeconds * 1000 }));
      return ++c.n;
    },
    async clear(key) {
      counts.delete(key);
    },
    async block(key, untilMs) {
      blocks.set(key, Math.max(untilMs, blocks.get(key) ?? 0));
    },
    async blocked(keys) {
      const now = Date.now();
      const out = new Set<string>();
      for (const k of keys) {
        const until = blocks.get(k);
        if (until === undefined) continue;
        if (until > now) out.add(k);
        else blocks.delete(k);
      }
      return out;
    },
  };
}

const HIT = `local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('EXPIRE', KEYS[1], ARGV[1]) end
return n`;

/** A later block wins: the key is only rewritten when its time is later than the stored one. */
const BLOCK = `local cur = tonumber(redis.call('GET', KEYS[1]) or '0')
if tonumber(ARGV[1]) > cur then redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) end
return 1`;

export function redisWindows(redis: Redis, prefix: string): Windows {
  return {
    async hit(key, windowSeconds) {
      return Number(await redis.eval(HIT, 1, `${prefix}n:${key}`, windowSeconds));
    },
    async clear(key) {
      await redis.del(`${prefix}n:${key}`);
    },
    async block(key, untilMs) {
      const ttl = Math.max(1, untilMs - Date.now());
      await redis.eval(BLOCK, 1, `${prefix}b:${key}`, untilMs, ttl);
    },
    async blocked(keys) {
      if (!keys.length) return new Set();
      const values = await redis.mget(keys.map((k) => `${prefix}b:${k}`));
      const now = Date.now();
      return new Set(keys.filter((_, i) => Number(values[i] ?? 0) > now));
    },
  };
}
