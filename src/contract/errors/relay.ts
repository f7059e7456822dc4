import type { ErrorCatalog } from '../../kit/http/errors.js';

/**
 * Failures of the gateway's relay (its internal data-plane API, /relay/v1/…). They are answered in the OpenAI
 * style {error: {message, type, code, param}} that OpenAI clients read; an upstream's own failure keeps the
 * upstream's HTTP status (after the channel's status_code_mapping) where the catalog status is the default.
 * The messages reach the edge's customers: they say what a customer can act on and never name settings,
 * addresses, groups or channels (staff find those in the relay log and the gateway's log).
 */
export const relayErrors = {
  relay_token_missing: { status: 401, type: 'invalid_request_error', en: 'No workload token: send Authorization: Bearer <JWT>', zh: '缺少工作负载令牌：请发送 Authorization: Bearer <JWT>' },
  relay_token_invalid: { status: 401, type: 'invalid_request_error', en: 'The workload token is not accepted: {detail}', zh: '工作负载令牌无效：{detail}' },
  relay_not_loopback: { status: 403, type: 'invalid_request_error', en: "The relay's internal API answers only on the loopback interface", zh: '中继内部接口只接受本机回环地址的请求' },
  relay_not_configured: { status: 503, type: 'server_error', en: "The relay's internal API is not enabled on this gateway", zh: '此网关未开启中继内部接口' },
  relay_call_not_found: { status: 404, type: 'invalid_request_error', en: 'No relayed call with this request id was made by this caller', zh: '该调用方没有此请求 ID 的中继调用' },
  relay_invalid_request: { status: 400, type: 'invalid_request_error', en: 'Invalid request: {detail}', zh: '请求无效：{detail}' },
  relay_unsupported_endpoint: { status: 400, type: 'invalid_request_error', en: 'This model does not serve this endpoint: {detail}', zh: '该模型不支持此接口：{detail}' },
  relay_request_too_deep: { status: 400, type: 'invalid_request_error', en: 'The request body nests arrays or objects deeper than {max} levels', zh: '请求体中数组或对象的嵌套超过 {max} 层' },
  relay_internal_error: { status: 500, type: 'server_error', en: 'The relay failed to handle this call; try again later', zh: '中继处理此调用时出错，请稍后再试' },
  relay_no_channel: { status: 503, type: 'server_error', en: 'The model is not available right now; try again later', zh: '该模型当前不可用，请稍后再试' },
  relay_model_unpriced: { status: 503, type: 'server_error', en: 'The model is not available', zh: '该模型暂不可用' },
  relay_upstream_error: { status: 502, type: 'upstream_error', en: 'The upstream answered HTTP {status}: {detail}', zh: '上游返回 HTTP {status}：{detail}' },
  relay_upstream_timeout: { status: 504, type: 'upstream_error', en: 'The upstream did not answer in time: {detail}', zh: '上游响应超时：{detail}' },
  relay_upstream_unreachable: { status: 502, type: 'upstream_error', en: 'The upstream could not be reached: {detail}', zh: '无法连接上游：{detail}' },
  relay_upstream_bad_response: { status: 502, type: 'upstream_error', en: 'The upstream answer could not be understood: {detail}', zh: '无法解析上游响应：{detail}' },
  relay_busy: { status: 503, type: 'server_error', en: 'The gateway is busy with other large answers; retry shortly', zh: '网关正忙于处理其他大型响应，请稍后重试' },
  relay_stream_interrupted: { status: 502, type: 'upstream_error', en: 'The upstream stream broke off: {detail}', zh: '上游流式响应中断：{detail}' },
} satisfies ErrorCatalog;

/** What a relayed call can fail with (an upstream's failure keeps the upstream's status): the relay's call routes', passed on by the edge. */
export const RELAY_CALL_ERRORS = [
  'relay_invalid_request',
  'relay_unsupported_endpoint',
  'relay_no_channel',
  'relay_model_unpriced',
  'relay_upstream_error',
  'relay_upstream_timeout',
  'relay_upstream_unreachable',
  'relay_upstream_bad_response',
  'relay_stream_interrupted',
  'relay_busy',
  'relay_request_too_deep',
  'relay_internal_error',
] as const satisfies readonly (keyof typeof relayErrors)[];

/** The kit's refusals of a malformed body as the relay's routes answer them (in the vendors' shapes too). */
export const relayCodeOfKit: Record<string, keyof typeof relayErrors> = {
  INVALID_PARAMETERS: 'relay_invalid_request',
  INVALID_JSON: 'relay_invalid_request',
  JSON_TOO_DEEP: 'relay_request_too_deep',
};
