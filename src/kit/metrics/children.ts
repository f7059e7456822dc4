/**
 * A metric's children by label values (in the metric's labelNames order), each resolved once and kept:
 * prom-client hashes the label set on every call otherwise. Callers pass bounded values only (operation
 * ids, route patterns, configured models, codes from a fixed list), so the map stays small.
 */
export function children<T>(metric: { labels(...values: string[]): T }): (...values: string[]) => T {
  const cache = new Map<string, T>();
  return (...values) => {
    const key = values.length === 1 ? values[0]! : values.join('\u0000');
    let child = cache.get(key);
    if (!child) cache.set(key, (child = metric.labels(...values)));
    return child;
  };
}
