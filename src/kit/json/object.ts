/** The JSON object in `text`; `{}` when the text is empty, not JSON, or JSON of another kind. */
export function jsonObject(text: string | null | undefined): Record<string, unknown> {
  try {
    const v = JSON.parse(text || '{}');
    return v && typeof v === 'object' && !Array.isArray(v) ? v : {};
  } catch {
    return {};
  }
}
