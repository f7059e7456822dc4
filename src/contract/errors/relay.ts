import type { ErrorCatalog } from '../../kit/http/errors.js';

/**
 * Failures of the gateway's relay (its internal data-plane API, /relay/v1/…). They are answered in the OpenAI
 * style {error: {message, type, code, param}} that OpenAI clients read; an upstream's own failure keeps the
 * upstream's HTTP status (after the channel's status_code_mapping) where the catalog status is the default.
 */
export const relayErrors = {
  relay_token_missing: { status: 401, type: 'invalid_request_error', en: 'No workload token: send Authorization: Bearer <JWT>', zh: '缺少工作负载令牌：请发送 Authorization: Bearer <JWT>' },
  relay_token_invalid: { status: 401, type: 'invalid_request_error', en: 'The workload token is not accepted: {detail}', zh: '工作负载令牌无效：{detail}' },
  relay_not_loopback: { status: 403, type: 'invalid_request_error', en: "The relay's internal API answers only on the loopback interface", zh: '中继内部接口只接受本机回环地址的请求' },
  relay_not_configured: {
    status: 503,
    type: 'server_error',
    en: "The relay's internal API is off: set GATEWAY_RELAY_TOKEN_SECRET or GATEWAY_RELAY_TOKEN_PUBLIC_KEY",
    zh: '中继内部接口未开启：请设置 GATEWAY_RELAY_TOKEN_SECRET 或 GATEWAY_RELAY_TOKEN_PUBLIC_KEY',
  },
  relay_call_not_found: { status: 404, type: 'invalid_request_error', en: 'No relayed call with this request id was made by this caller', zh: '该调用方没有此请求 ID 的中继调用' },
  relay_invalid_request: { status: 400, type: 'invalid_request_error', en: 'Invalid request: {detail}', zh: '请求无效：{detail}' },
  relay_no_channel: { status: 503, type: 'server_error', en: 'No available channel for model {model} in group {group}', zh: '分组 {group} 下模型 {model} 无可用渠道' },
  relay_model_unpriced: {
    status: 503,
    type: 'server_error',
    en: 'Model {model} has no price in the ratio configuration (set model_ratio or model_price, or GATEWAY_RELAY_ALLOW_UNPRICED)',
    zh: '模型 {model} 未配置倍率或价格（请设置 model_ratio 或 model_price，或 GATEWAY_RELAY_ALLOW_UNPRICED）',
  },
  relay_upstream_error: { status: 502, type: 'upstream_error', en: 'The upstream answered HTTP {status}: {detail}', zh: '上游返回 HTTP {status}：{detail}' },
  relay_upstream_timeout: { status: 504, type: 'upstream_error', en: 'The upstream did not answer in time: {detail}', zh: '上游响应超时：{detail}' },
  relay_upstream_unreachable: { status: 502, type: 'upstream_error', en: 'The upstream could not be reached: {detail}', zh: '无法连接上游：{detail}' },
  relay_upstream_bad_response: { status: 502, type: 'upstream_error', en: 'The upstream answer could not be understood: {detail}', zh: '无法解析上游响应：{detail}' },
  relay_stream_interrupted: { status: 502, type: 'upstream_error', en: 'The upstream stream broke off: {detail}', zh: '上游流式响应中断：{detail}' },
} satisfies ErrorCatalog;
