import type { RelayErrorView } from './types.js';

/** OpenAI's error shape, as its SDKs read it (the chat, Responses and embeddings formats): {error: {message, type, code, param}, requestId}. */
export function openaiErrorBody(e: RelayErrorView): unknown {
  const type = e.type ?? (e.status >= 500 ? 'server_error' : 'invalid_request_error');
  return { error: { message: e.message, type, code: e.code, param: e.field === undefined ? null : String(e.field) }, requestId: e.requestId };
}
