export type JsonObject = Record<string, unknown>;

/** A JSON object: not null, not an array. */
export const isObject = (v: unknown): v is JsonObject => typeof v === 'object' && v !== null && !Array.isArray(v);

/** The value if it is a JSON object, else `{}` (for reading fields of a body that may hold anything). */
export const objectOf = (v: unknown): JsonObject => (isObject(v) ? v : {});

/** The value if it is a string, else ''. */
export const stringOf = (v: unknown): string => (typeof v === 'string' ? v : '');

/** The value's elements, each read as an object (see objectOf), if it is an array; else []. */
export const listOf = (v: unknown): JsonObject[] => (Array.isArray(v) ? v.map(objectOf) : []);

/** The JSON object in `text`; `{}` when the text is empty, not JSON, or JSON of another kind. */
export function jsonObject(text: string | null | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(text || '{}');
    return isObject(v) ? v : {};
  } catch {
    return {};
  }
}
