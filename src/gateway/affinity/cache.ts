import type { Redis } from 'ioredis';

export interface UsageCounters {
  hit: number;
  total: number;
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  cached_tokens: number;
  prompt_cache_hit_tokens: number;
  last_seen_at: number;
}

export const USAGE_FIELDS = ['hit', 'total', 'prompt_tokens', 'completion_tokens', 'total_tokens', 'cached_tokens', 'prompt_cache_hit_tokens'] as const;

/**
 * Affinity entries (`v1:<rule>:<model>:<group>:<value hash>` → channel id, each with a TTL) and usage
 * counters per (rule, group, key fingerprint). In process: an LRU bounded by max_entries; with Redis: keys
 * with their own expiry, shared by every instance.
 */
export interface AffinityCache {
  algo: 'lru' | 'redis';
  set(key: string, channelId: number, ttlSeconds: number, capacity: number): Promise<void>;
  get(key: string): Promise<number | null>;
  /** Forgets one entry. */
  drop(key: string): Promise<void>;
  /** Live entries, counted by their rule segment. */
  stats(): Promise<Record<string, number>>;
  /** Deletes every entry, or those of one rule segment; answers how many. */
  delete(rule?: string): Promise<number>;
  addUsage(key: string, delta: Partial<Record<(typeof USAGE_FIELDS)[number], number>>, windowSeconds: number): Promise<void>;
  usage(key: string): Promise<UsageCounters | null>;
}

const ruleOf = (key: string) => key.split(':')[1] ?? '';

export function memoryCache(): AffinityCache {
  const entries = new Map<string, { channelId: number; expiresAt: number }>();
  const usage = new Map<string, { counters: UsageCounters; expiresAt: number }>();
  const live = (e: { expiresAt: number }) => e.expiresAt > Date.now();
  return {
    algo: 'lru',
    async set(key, channelId, ttlSeconds, capacity) {
      entries.delete(key);
      entries.set(key, { channelId, expiresAt: Date.now() + ttlSeconds * 1000 });
      while (entries.size > capacity) entries.delete(entries.keys().next().value!);
    },
    async get(key) {
      const e = entries.get(key);
      if (!e) return null;
      entries.delete(key);
      if (!live(e)) return null;
      entries.set(key, e);
      return e.channelId;
    },
    async drop(key) {
      entries.delete(key);
    },
    async stats() {
      const out: Record<string, number> = {};
      for (const [key, e] of entries) {
        if (!live(e)) {
          entries.delete(key);
          continue;
        }
        out[ruleOf(key)] = (out[ruleOf(key)] ?? 0) + 1;
      }
      return out;
    },
    async delete(rule) {
      let n = 0;
      for (const [key, e] of entries) {
        if (rule !== undefined && ruleOf(key) !== rule) continue;
        entries.delete(key);
        if (live(e)) n++;
      }
      return n;
    },
    async addUsage(key, delta, windowSeconds) {
      let u = usage.get(key);
      if (!u || !live(u)) {
        u = { counters: { hit: 0, total: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cached_tokens: 0, prompt_cache_hit_tokens: 0, last_seen_at: 0 }, expiresAt: 0 };
        usage.set(key, u);
      }
      for (const f of USAGE_FIELDS) u.counters[f] += delta[f] ?? 0;
      u.counters.last_seen_at = Math.floor(Date.now() / 1000);
      u.expiresAt = Date.now() + windowSeconds * 1000;
    },
    async usage(key) {
      const u = usage.get(key);
      return u && live(u) ? { ...u.counters } : null;
    },
  };
}

/** Redis store: every key under `prefix`; scans with SCAN (never KEYS) and deletes with UNLINK. */
export function redisCache(redis: Redis, prefix: string): AffinityCache {
  const entry = (key: string) => `${prefix}affinity:${key}`;
  const usageKey = (key: string) => `${prefix}affinity_usage:${key}`;
  async function* scan(match: string) {
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', match, 'COUNT', 1000);
      cursor = next;
      yield keys;
    } while (cursor !== '0');
  }
  const glob = (s: string) => s.replace(/[*?[\]\\]/g, (c) => '\\' + c);
  return {
    algo: 'redis',
    async set(key, channelId, ttlSeconds) {
      await redis.set(entry(key), String(channelId), 'EX', ttlSeconds);
    },
    async get(key) {
      const v = await redis.get(entry(key));
      return v === null ? null : Number(v);
    },
    async drop(key) {
      await redis.del(entry(key));
    },
    async stats() {
      const out: Record<string, number> = {};
      const skip = `${prefix}affinity:`.length;
      for await (const keys of scan(`${glob(prefix)}affinity:v1:*`)) {
        for (const k of keys) {
          const rule = ruleOf(k.slice(skip));
          out[rule] = (out[rule] ?? 0) + 1;
        }
      }
      return out;
    },
    async delete(rule) {
      let n = 0;
      for await (const keys of scan(`${glob(prefix)}affinity:v1:${rule === undefined ? '' : glob(rule) + ':'}*`)) {
        if (keys.length) n += await redis.unlink(...keys);
      }
      return n;
    },
    async addUsage(key, delta, windowSeconds) {
      const k = usageKey(key);
      const m = redis.multi();
      for (const f of USAGE_FIELDS) if (delta[f]) m.hincrby(k, f, delta[f]!);
      m.hset(k, 'last_seen_at', Math.floor(Date.now() / 1000));
      m.expire(k, windowSeconds);
      await m.exec();
    },
    async usage(key) {
      const h = await redis.hgetall(usageKey(key));
      if (!Object.keys(h).length) return null;
      const n = (f: string) => Number(h[f] ?? 0);
      return { hit: n('hit'), total: n('total'), prompt_tokens: n('prompt_tokens'), completion_tokens: n('completion_tokens'), total_tokens: n('total_tokens'), cached_tokens: n('cached_tokens'), prompt_cache_hit_tokens: n('prompt_cache_hit_tokens'), last_seen_at: n('last_seen_at') };
    },
  };
}
