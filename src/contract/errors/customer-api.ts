import type { ErrorCatalog } from '../../kit/http/errors.js';

/**
 * Failures of the edge's internal customer API (ER01, src/contract/customer-wire.ts), in the edge's OpenAI
 * shape. Only the account service reads them: it turns the refusals (customer_not_found …) back into
 * CustomerRefusal with the detail the edge sent in `error.detail`, and every other failure into
 * CustomerRefusal('unavailable'). The messages never repeat a token or name a key.
 */
export const customerApiErrors = {
  customer_api_not_loopback: {
    status: 403,
    type: 'invalid_request_error',
    en: "The edge's internal customer API answers only direct requests on the loopback interface",
    zh: '边缘服务的内部客户接口只接受本机回环地址的直接请求',
  },
  customer_api_not_configured: { status: 503, type: 'server_error', en: "The edge's internal customer API is not enabled", zh: '边缘服务未开启内部客户接口' },
  customer_api_token_missing: { status: 401, type: 'invalid_request_error', en: 'No workload token: send Authorization: Bearer <JWT>', zh: '缺少工作负载令牌：请发送 Authorization: Bearer <JWT>' },
  customer_api_token_invalid: { status: 401, type: 'invalid_request_error', en: 'The workload token is not accepted: {detail}', zh: '工作负载令牌无效：{detail}' },
  customer_api_unknown_method: { status: 404, type: 'invalid_request_error', en: 'The customer port has no method {method}', zh: '客户端口没有方法 {method}' },
  customer_api_bad_arguments: { status: 400, type: 'invalid_request_error', en: 'Invalid arguments of {method}: {detail}', zh: '{method} 的参数无效：{detail}' },
  customer_not_found: { status: 404, type: 'invalid_request_error', en: 'No such token or code of this user', zh: '该用户没有此令牌或兑换码' },
  customer_invalid: { status: 400, type: 'invalid_request_error', en: 'Invalid value: {detail}', zh: '取值无效：{detail}' },
  customer_key_already_shown: { status: 409, type: 'invalid_request_error', en: "The key's one showing is past", zh: '该密钥已展示过一次' },
  customer_code_invalid: { status: 409, type: 'invalid_request_error', en: 'Invalid or already used top-up code', zh: '兑换码无效或已被使用' },
  customer_insufficient: { status: 409, type: 'invalid_request_error', en: 'The balance cannot go below what running calls hold: {detail}', zh: '余额不能低于进行中调用所预留的额度：{detail}' },
  customer_unavailable: { status: 503, type: 'server_error', en: 'The customer port is unavailable: {detail}', zh: '客户端口不可用：{detail}' },
} satisfies ErrorCatalog;
