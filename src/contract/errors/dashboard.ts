import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Errors of the routes new-api's dashboard needs beyond SPEC (AS01–AS04). HTTP 200 like the reference's handler checks. */
export const dashboardErrors = {
  // new-api's admin pages whose data lives elsewhere here (src/contract/gateway-console-routes.ts): 501 as
  // every route the dashboard calls that this service does not serve, with where to go instead.
  GATEWAY_CONSOLE_ONLY: {
    status: 501,
    en: 'Channels, models, system settings and system info are managed in the gateway console (the gateway service), not on the account service',
    zh: '渠道、模型、系统设置与系统信息在网关控制台（网关服务）中管理，账户服务不提供',
  },
  ONLINE_TOPUP_UNAVAILABLE: {
    status: 200,
    en: 'Online payment is not available here: redeem a top-up code instead',
    zh: '此处不支持在线支付，请使用兑换码充值',
  },
  ACCOUNT_CLI_ONLY: {
    status: 501,
    en: 'Custom OAuth providers are set with the account CLI (npm run cli -- oauth add-provider) or OAUTH_CUSTOM_PROVIDERS_FILE, not from the dashboard',
    zh: '自定义 OAuth 提供方通过账户命令行（npm run cli -- oauth add-provider）或 OAUTH_CUSTOM_PROVIDERS_FILE 配置，不能在控制台中设置',
  },
  SELF_UPDATE_INVALID: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  SELF_ORIGINAL_PASSWORD_WRONG: { status: 200, en: 'The original password is incorrect', zh: '原密码错误' },
  SELF_PASSWORD_NOT_SET: {
    status: 200,
    en: 'This account has no password; set one through a password reset',
    zh: '该账户尚未设置密码，请通过重置密码设置',
  },
  // The customer API (issue 30): new-api's token, log, redemption and top-up handlers answer HTTP 200 with
  // success false; so do these, for its dashboard. Only an unreachable edge is a real 503.
  CUSTOMER_INVALID: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  TOKEN_NOT_FOUND: { status: 200, en: 'No such token', zh: '令牌不存在' },
  TOKEN_KEY_ALREADY_SHOWN: {
    status: 200,
    en: 'This key was already shown once and is stored only hashed; create a new token to get a new key',
    zh: '该密钥已展示过一次且仅以哈希形式保存；如需新密钥请创建新令牌',
  },
  TOPUP_CODE_INVALID: { status: 200, en: 'Invalid or already used top-up code', zh: '兑换码无效或已被使用' },
  TOPUP_CODE_NOT_FOUND: { status: 200, en: 'No such top-up code', zh: '兑换码不存在' },
  QUOTA_BELOW_RESERVED: {
    status: 200,
    en: 'The balance cannot go below what running calls hold: {detail}',
    zh: '余额不能低于进行中调用所预留的额度：{detail}',
  },
  // GET /api/user/models?group= (AP29) naming a group that is not the caller's own (a user has one group here).
  MODEL_GROUP_DENIED: {
    status: 200,
    en: 'You may not use the group {group}: models are listed for your own group only',
    zh: '无权使用分组 {group}：只能查看你自己分组的模型',
  },
  // The playground (AP49) answers in OpenAI's shape {error: {message, type, code}} with a real HTTP status.
  PLAYGROUND_GROUP_DENIED: { status: 403, en: 'You may not use the group {group}: the playground calls in your own group', zh: '无权访问分组 {group}：试用只能使用你自己的分组' },
  EDGE_UNAVAILABLE: {
    status: 503,
    en: 'Keys, balances and usage are served by the edge, which is not reachable from this service',
    zh: '密钥、余额与用量由边缘服务提供，当前无法访问',
  },
} satisfies ErrorCatalog;
