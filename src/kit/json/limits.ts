/**
 * How deep JSON may nest. Parsing is iterative, but `JSON.stringify`, structured clone and every recursive
 * reader of a body overflow the call stack a few thousand levels down: a body is refused before any of them
 * sees it. One rule for the text (at parse time) and for a value handed over in process.
 */
/** Deep enough for any real request (tool schemas nest a few dozen levels), far from a stack overflow. */
export const DEFAULT_MAX_JSON_DEPTH = 128;

export class JsonTooDeep extends Error {
  constructor(readonly maxDepth: number) {
    super(`the JSON nests deeper than ${maxDepth} levels`);
    this.name = 'JsonTooDeep';
  }
}

/** Throws JsonTooDeep when arrays and objects in `text` nest deeper than `maxDepth` (brackets inside strings do not count). */
export function checkJsonTextDepth(text: string, maxDepth: number): void {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > maxDepth) throw new JsonTooDeep(maxDepth);
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
}

/** Throws JsonTooDeep when a parsed value's arrays and objects nest deeper than `maxDepth`; walks with its own stack. */
export function checkJsonValueDepth(value: unknown, maxDepth: number): void {
  const pending: [unknown, number][] = [[value, 0]];
  while (pending.length) {
    const [v, d] = pending.pop()!;
    if (!v || typeof v !== 'object') continue;
    if (d + 1 > maxDepth) throw new JsonTooDeep(maxDepth);
    for (const inner of Array.isArray(v) ? v : Object.values(v)) if (inner && typeof inner === 'object') pending.push([inner, d + 1]);
  }
}
