/** Readers of one environment variable each: a bad value throws a ConfigError naming the variable. */
export class ConfigError extends Error {}

export type Env = Record<string, string | undefined>;

export function str(env: Env, name: string, def: string): string {
  const v = env[name];
  return v === undefined || v === '' ? def : v;
}

export function bool(env: Env, name: string, def: boolean): boolean {
  const v = env[name];
  if (v === undefined || v === '') return def;
  if (/^(1|true|yes|on)$/i.test(v)) return true;
  if (/^(0|false|no|off)$/i.test(v)) return false;
  throw new ConfigError(`${name} must be true or false, got "${v}"`);
}

export function int(env: Env, name: string, def: number, min = 0, max = Number.MAX_SAFE_INTEGER): number {
  const v = env[name];
  if (v === undefined || v === '') return def;
  if (!/^-?\d+$/.test(v.trim())) throw new ConfigError(`${name} must be an integer, got "${v}"`);
  const n = Number(v);
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}`);
  return n;
}

export function list(env: Env, name: string): string[] {
  return str(env, name, '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}
