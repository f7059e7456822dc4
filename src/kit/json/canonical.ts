/**
 * JSON text of a parsed JSON value with every object's keys in sorted order, so two texts that differ
 * only in key order (or whitespace) give the same string: for comparing or hashing request bodies.
 */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return '[' + value.map(canonicalJson).join(',') + ']';
  if (value && typeof value === 'object') {
    const entries = Object.keys(value).sort().map((k) => JSON.stringify(k) + ':' + canonicalJson((value as Record<string, unknown>)[k]));
    return '{' + entries.join(',') + '}';
  }
  return JSON.stringify(value ?? null);
}
