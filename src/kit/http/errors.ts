/**
 * Errors carry a stable code; the catalog gives each code its HTTP status and its messages.
 * Handlers throw AppError; the app's error handler renders the envelope.
 */
export interface ErrorDef {
  status: number;
  en: string;
  zh: string;
  /** Error class for deployables answering the OpenAI-style shape {error: {type, code, …}} (the edge). */
  type?: string;
}

export type ErrorCatalog = Record<string, ErrorDef>;

export interface AppErrorOptions {
  params?: Record<string, string | number>;
  data?: unknown;
  headers?: Record<string, string>;
  /** Runs before the response is sent (for example to clear a cookie). */
  onReply?: (reply: import('fastify').FastifyReply) => void;
}

export class AppError extends Error {
  constructor(
    readonly code: string,
    readonly options: AppErrorOptions = {},
  ) {
    super(code);
    this.name = 'AppError';
  }
}

/** Codes with no domain words, used by the kit itself. */
export const kitErrors = {
  INVALID_PARAMETERS: { status: 400, en: 'Invalid parameters: {detail}', zh: '参数错误：{detail}' },
  INVALID_JSON: { status: 400, en: 'Request body is not valid JSON', zh: '请求体不是合法的 JSON' },
  JSON_TOO_DEEP: { status: 400, en: 'The request body nests arrays or objects deeper than {max} levels', zh: '请求体中数组或对象的嵌套超过 {max} 层' },
  PAYLOAD_TOO_LARGE: { status: 413, en: 'Request body is too large', zh: '请求体过大' },
  HEADERS_TOO_LARGE: { status: 431, en: 'Request headers or URL are too large', zh: '请求头或 URL 过大' },
  REQUEST_TIMEOUT: { status: 408, en: 'The request was not received in time', zh: '未能及时收到完整请求' },
  UNSUPPORTED_MEDIA_TYPE: {
    status: 415,
    en: 'Unsupported content type, use application/json',
    zh: '不支持的内容类型，请使用 application/json',
  },
  NOT_FOUND: { status: 404, en: 'Not found', zh: '未找到' },
  METHOD_NOT_ALLOWED: { status: 405, en: 'Method not allowed', zh: '不允许的请求方法' },
  RATE_LIMITED: {
    status: 429,
    en: 'Too many requests, please try again in {seconds} seconds',
    zh: '请求过于频繁，请在 {seconds} 秒后重试',
  },
  NOT_IMPLEMENTED: {
    status: 501,
    en: 'Operation {operation} is planned but not implemented yet',
    zh: '操作 {operation} 尚未实现',
  },
  OPERATION_DISABLED: { status: 404, en: 'Operation {operation} is disabled', zh: '操作 {operation} 已停用' },
  OPS_TOKEN_REQUIRED: { status: 401, en: 'This endpoint needs the operator token (Authorization: Bearer OPS_TOKEN)', zh: '此接口需要运维令牌（Authorization: Bearer OPS_TOKEN）' },
  OPS_LOOPBACK_ONLY: {
    status: 403,
    en: 'This endpoint answers only direct requests from this host; set OPS_TOKEN to reach it from elsewhere',
    zh: '此接口只响应本机的直接请求；如需从其他位置访问，请设置 OPS_TOKEN',
  },
  INTERNAL_ERROR: { status: 500, en: 'Internal server error', zh: '服务器内部错误' },
  SERVICE_UNAVAILABLE: { status: 503, en: 'Service unavailable', zh: '服务不可用' },
} satisfies ErrorCatalog;

export type Lang = 'en' | 'zh';

export function langOf(acceptLanguage: string | undefined): Lang {
  return acceptLanguage && /^\s*zh/i.test(acceptLanguage) ? 'zh' : 'en';
}

export function renderMessage(def: ErrorDef, lang: Lang, params: Record<string, string | number> = {}): string {
  return def[lang].replace(/\{(\w+)\}/g, (_, k: string) => (k in params ? String(params[k]) : ''));
}
