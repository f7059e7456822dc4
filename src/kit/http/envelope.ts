/** The reference system's response envelope: {success, message, data}. */
export function ok<T>(data?: T, message = ''): { success: true; message: string; data?: T } {
  return data === undefined ? { success: true, message } : { success: true, message, data };
}

/** JSON text that was serialised already (for example built by the database); spliced in as is. */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * JSON.stringify for plain objects and arrays that may hold RawJson fragments at any depth: only the
 * small surrounding structure is serialised here, each fragment's text is copied in unchanged. Other
 * values go through JSON.stringify (undefined object members are left out, as JSON.stringify does).
 */
export function jsonWithRaw(value: unknown): string {
  if (value instanceof RawJson) return value.text;
  if (Array.isArray(value)) return '[' + value.map((v) => (v === undefined || typeof v === 'function' ? 'null' : jsonWithRaw(v))).join(',') + ']';
  if (value !== null && typeof value === 'object' && Object.getPrototypeOf(value) === Object.prototype) {
    const parts: string[] = [];
    for (const [k, v] of Object.entries(value)) {
      if (v === undefined || typeof v === 'function' || typeof v === 'symbol') continue;
      parts.push(JSON.stringify(k) + ':' + jsonWithRaw(v));
    }
    return '{' + parts.join(',') + '}';
  }
  return JSON.stringify(value) ?? 'null';
}
