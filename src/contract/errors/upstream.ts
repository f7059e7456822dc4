import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Failures of requests the gateway makes to upstream suppliers (src/kit/upstream, src/gateway/upstream). */
export const upstreamErrors = {
  UPSTREAM_ADDRESS_REFUSED: {
    status: 400,
    en: 'The upstream address is not allowed: {detail}. Private addresses need GATEWAY_UPSTREAM_ALLOW_PRIVATE or GATEWAY_UPSTREAM_ALLOW_LIST',
    zh: '不允许访问该上游地址：{detail}。私有地址需要设置 GATEWAY_UPSTREAM_ALLOW_PRIVATE 或 GATEWAY_UPSTREAM_ALLOW_LIST',
  },
  UPSTREAM_URL_INVALID: { status: 400, en: 'Invalid upstream URL: {detail}', zh: '上游地址无效：{detail}' },
  UPSTREAM_TIMEOUT: { status: 504, en: 'The upstream did not answer in time: {detail}', zh: '上游响应超时：{detail}' },
  UPSTREAM_BODY_TOO_LARGE: { status: 502, en: 'The upstream answer is too large: {detail}', zh: '上游响应过大：{detail}' },
  UPSTREAM_BUFFER_FULL: {
    status: 503,
    en: 'The gateway holds as many upstream answers in memory as GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES allows: {detail}; retry shortly',
    zh: '网关在内存中暂存的上游响应已达 GATEWAY_UPSTREAM_MAX_BUFFERED_BYTES 上限：{detail}；请稍后重试',
  },
  UPSTREAM_UNREACHABLE: { status: 502, en: 'The upstream could not be reached: {detail}', zh: '无法连接上游：{detail}' },
  UPSTREAM_BAD_STATUS: { status: 502, en: 'The upstream answered HTTP {status}: {detail}', zh: '上游返回 HTTP {status}：{detail}' },
  UPSTREAM_BAD_RESPONSE: { status: 502, en: 'The upstream answer could not be understood: {detail}', zh: '无法解析上游响应：{detail}' },
  UPSTREAM_NOT_SUPPORTED: { status: 400, en: '{operation} is not supported for channel type {type}', zh: '渠道类型 {type} 不支持{operation}' },
} satisfies ErrorCatalog;
