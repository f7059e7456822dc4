import type { ErrorCatalog, kitErrors } from '../../kit/http/errors.js';
import { RELAY_CALL_ERRORS } from './relay.js';

/**
 * Failures of the edge (SPEC "Archived design: machine-facing public API"). The edge answers them in the
 * OpenAI style {error: {message, type, code, param}, requestId}: codes are lower case with underscores
 * and `type` is the OpenAI error class. The kit's own codes (bad JSON, body too large, validation …)
 * reach the edge under the names in `edgeCodeOfKit`.
 */
export const edgeErrors = {
  missing_api_key: {
    status: 401,
    type: 'invalid_request_error',
    en: 'No API key provided: send Authorization: Bearer svc_sk_<keyId>.<secret>',
    zh: '未提供 API 密钥：请发送 Authorization: Bearer svc_sk_<keyId>.<secret>',
  },
  invalid_api_key: { status: 401, type: 'invalid_request_error', en: 'Invalid API key', zh: 'API 密钥无效' },
  customer_session_not_accepted: {
    status: 401,
    type: 'invalid_request_error',
    en: 'Customer sessions, cookies and account tokens are not accepted here: use an API key (svc_sk_…, or an imported sk-…)',
    zh: '此处不接受客户会话、Cookie 或账户令牌：请使用 API 密钥（svc_sk_…，或导入的 sk-…）',
  },
  admission_disabled: {
    status: 503,
    type: 'server_error',
    en: 'Public admission is disabled on this deployment',
    zh: '此部署已关闭公共准入',
  },
  idempotency_key_required: {
    status: 400,
    type: 'invalid_request_error',
    en: 'The Idempotency-Key header is required',
    zh: '必须提供 Idempotency-Key 请求头',
  },
  invalid_idempotency_key: {
    status: 400,
    type: 'invalid_request_error',
    en: 'The Idempotency-Key header must be 1 to 255 printable ASCII characters without spaces',
    zh: 'Idempotency-Key 请求头必须为 1 到 255 个不含空格的可打印 ASCII 字符',
  },
  idempotency_key_conflict: {
    status: 409,
    type: 'invalid_request_error',
    en: 'This Idempotency-Key was already used with a different request body',
    zh: '该 Idempotency-Key 已用于不同的请求体',
  },
  invalid_traceparent: {
    status: 400,
    type: 'invalid_request_error',
    en: 'The traceparent header must be a well-formed W3C trace context of version 00',
    zh: 'traceparent 请求头必须是格式正确的 W3C 追踪上下文（版本 00）',
  },
  invalid_request_body: { status: 400, type: 'invalid_request_error', en: 'Invalid request body: {detail}', zh: '请求体无效：{detail}' },
  invalid_json: { status: 400, type: 'invalid_request_error', en: 'The request body is not valid JSON', zh: '请求体不是合法的 JSON' },
  json_too_deep: { status: 400, type: 'invalid_request_error', en: 'The request body nests arrays or objects deeper than {max} levels', zh: '请求体中数组或对象的嵌套超过 {max} 层' },
  request_too_large: { status: 413, type: 'invalid_request_error', en: 'The request body is too large', zh: '请求体过大' },
  request_headers_too_large: { status: 431, type: 'invalid_request_error', en: 'The request headers or URL are too large', zh: '请求头或 URL 过大' },
  request_timeout: { status: 408, type: 'invalid_request_error', en: 'The request was not received in time', zh: '未能及时收到完整请求' },
  unsupported_media_type: {
    status: 415,
    type: 'invalid_request_error',
    en: 'Unsupported content type, use application/json',
    zh: '不支持的内容类型，请使用 application/json',
  },
  model_not_found: {
    status: 404,
    type: 'invalid_request_error',
    en: 'The model {model} does not exist or you do not have access to it',
    zh: '模型 {model} 不存在或无权访问',
  },
  model_disabled: { status: 400, type: 'invalid_request_error', en: 'The model {model} is currently disabled', zh: '模型 {model} 当前已停用' },
  insufficient_balance: {
    status: 402,
    type: 'insufficient_quota',
    en: 'Insufficient balance: this request reserves {amount}, {available} is available',
    zh: '余额不足：本次请求需预留 {amount}，可用 {available}',
  },
  token_expired: { status: 401, type: 'invalid_request_error', en: 'This API key has expired', zh: '该 API 密钥已过期' },
  token_disabled: { status: 401, type: 'invalid_request_error', en: 'This API key is disabled', zh: '该 API 密钥已禁用' },
  user_disabled: { status: 403, type: 'invalid_request_error', en: 'The account this API key belongs to is disabled', zh: '该 API 密钥所属的用户已被禁用' },
  token_quota_exhausted: {
    status: 403,
    type: 'insufficient_quota',
    en: 'This API key has reached its spending limit: {remaining} left, this request needs {amount}',
    zh: '该 API 密钥已达到消费上限：剩余 {remaining}，本次请求需要 {amount}',
  },
  model_not_allowed: { status: 403, type: 'invalid_request_error', en: 'This API key may not use the model {model}', zh: '该 API 密钥无权使用模型 {model}' },
  ip_not_allowed: { status: 403, type: 'invalid_request_error', en: 'This API key may not be used from this address', zh: '该 API 密钥不允许从此地址使用' },
  rate_limited: {
    status: 429,
    type: 'rate_limit_error',
    en: 'Too many requests for this key, retry in {seconds} seconds',
    zh: '该密钥请求过于频繁，请在 {seconds} 秒后重试',
  },
  concurrency_limited: {
    status: 429,
    type: 'rate_limit_error',
    en: 'Too many calls of this account are in flight ({limit}); retry when one has finished',
    zh: '该账户进行中的调用过多（{limit}），请在其中一个结束后重试',
  },
  run_not_found: { status: 404, type: 'invalid_request_error', en: 'No response with id {id} was found', zh: '未找到 ID 为 {id} 的响应' },
  run_not_cancellable: { status: 409, type: 'invalid_request_error', en: 'The response {id} has already ended ({status})', zh: '响应 {id} 已结束（{status}）' },
  api_not_implemented: {
    status: 501,
    type: 'new_api_error',
    en: 'API not implemented: this placeholder route is not supported by this product',
    zh: '接口未实现：本产品不支持此占位路由',
  },
  unknown_route: { status: 404, type: 'invalid_request_error', en: 'Unknown request URL: {method} {path}', zh: '未知的请求地址：{method} {path}' },
  method_not_allowed: { status: 405, type: 'invalid_request_error', en: 'Method not allowed', zh: '不允许的请求方法' },
  ops_token_required: {
    status: 401,
    type: 'invalid_request_error',
    en: 'This endpoint needs the operator token (Authorization: Bearer OPS_TOKEN)',
    zh: '此接口需要运维令牌（Authorization: Bearer OPS_TOKEN）',
  },
  ops_loopback_only: {
    status: 403,
    type: 'invalid_request_error',
    en: 'This endpoint answers only direct requests from this host; set OPS_TOKEN to reach it from elsewhere',
    zh: '此接口只响应本机的直接请求；如需从其他位置访问，请设置 OPS_TOKEN',
  },
  internal_error: { status: 500, type: 'server_error', en: 'The server had an error processing the request', zh: '服务器处理请求时出错' },
  service_unavailable: { status: 503, type: 'server_error', en: 'Service unavailable', zh: '服务不可用' },
} satisfies ErrorCatalog;

/**
 * What a call of the edge can answer (a key's, or the account's playground passing the edge's answer on):
 * reserved in the owner's wallet, the relay's failures passed on.
 */
export const EDGE_CALL_ERRORS = [
  'admission_disabled',
  'invalid_request_body',
  'model_not_found',
  'model_disabled',
  'insufficient_balance',
  'model_not_allowed',
  'token_quota_exhausted',
  'concurrency_limited',
  'service_unavailable',
  ...RELAY_CALL_ERRORS,
];

/** The edge's names for the kit's codes (the kit raises them before any edge code runs): every one of them. */
export const edgeCodeOfKit: Record<keyof typeof kitErrors, keyof typeof edgeErrors> = {
  INVALID_PARAMETERS: 'invalid_request_body',
  INVALID_JSON: 'invalid_json',
  JSON_TOO_DEEP: 'json_too_deep',
  PAYLOAD_TOO_LARGE: 'request_too_large',
  HEADERS_TOO_LARGE: 'request_headers_too_large',
  REQUEST_TIMEOUT: 'request_timeout',
  UNSUPPORTED_MEDIA_TYPE: 'unsupported_media_type',
  NOT_FOUND: 'unknown_route',
  METHOD_NOT_ALLOWED: 'method_not_allowed',
  RATE_LIMITED: 'rate_limited',
  NOT_IMPLEMENTED: 'api_not_implemented',
  OPERATION_DISABLED: 'unknown_route',
  OPS_TOKEN_REQUIRED: 'ops_token_required',
  OPS_LOOPBACK_ONLY: 'ops_loopback_only',
  INTERNAL_ERROR: 'internal_error',
  SERVICE_UNAVAILABLE: 'service_unavailable',
};

/** The code the edge answers for `code` (a kit code under its edge name, any other unchanged). */
export function edgeCodeOf(code: string): string {
  return (edgeCodeOfKit as Record<string, string>)[code] ?? code;
}
