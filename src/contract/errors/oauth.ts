import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Email codes, password reset, OAuth, WeChat, Telegram and binding errors. Statuses follow the reference. */
export const oauthErrors = {
  EMAIL_INVALID: { status: 200, en: 'Invalid email address', zh: '无效的邮箱地址' },
  EMAIL_VERIFICATION_RATE_LIMITED: {
    status: 429,
    en: 'Sending too frequently, please wait {seconds} seconds and try again',
    zh: '发送过于频繁，请等待 {seconds} 秒后再试',
  },
  EMAIL_SEND_FAILED: { status: 200, en: 'Failed to send the email, please try again later', zh: '邮件发送失败，请稍后重试' },
  RESET_LINK_INVALID: {
    status: 200,
    en: 'Password reset link is invalid or has expired',
    zh: '重置链接非法或已过期',
  },
  RESET_PASSWORD_INVALID: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  OAUTH_UNKNOWN_PROVIDER: { status: 400, en: 'Unknown OAuth provider', zh: '未知的 OAuth 提供商' },
  OAUTH_PROVIDER_DISABLED: {
    status: 200,
    en: '{provider} login and registration has not been enabled by administrator',
    zh: '管理员未开启通过 {provider} 登录以及注册',
  },
  OAUTH_INVALID_REQUEST: { status: 400, en: 'Invalid OAuth request: {detail}', zh: '无效的 OAuth 请求：{detail}' },
  OAUTH_BIND_LOGIN_REQUIRED: { status: 401, en: 'Binding requires a logged-in session', zh: '绑定操作需要登录' },
  OAUTH_STATE_INVALID: { status: 403, en: 'State parameter is empty or mismatched', zh: 'state 为空或不匹配' },
  OAUTH_FLOW_SESSION_MISMATCH: {
    status: 403,
    en: 'This OAuth flow belongs to another login session',
    zh: '该 OAuth 流程属于其他登录会话',
  },
  OAUTH_PROVIDER_ERROR: { status: 200, en: '{detail}', zh: '{detail}' },
  OAUTH_EXCHANGE_FAILED: {
    status: 502,
    en: 'The {provider} login could not be completed, please try again',
    zh: '{provider} 登录未能完成，请重试',
  },
  OAUTH_USER_DELETED: { status: 200, en: 'User has been deleted', zh: '用户已注销' },
  OAUTH_USER_BANNED: { status: 200, en: 'User has been banned', zh: '用户已被封禁' },
  ACCOUNT_ALREADY_BOUND: {
    status: 200,
    en: 'This {provider} account has already been bound',
    zh: '该 {provider} 账户已被绑定',
  },
  OAUTH_VERIFY_IDENTITY_MISMATCH: {
    status: 403,
    en: 'This {provider} account is not the one bound to your account',
    zh: '该 {provider} 账户不是您已绑定的账户',
  },
  OAUTH_BINDING_NOT_FOUND: { status: 404, en: 'Binding not found', zh: '绑定不存在' },
  LAST_LOGIN_METHOD: {
    status: 409,
    en: 'This is your last way to sign in; add another method before removing it',
    zh: '这是您唯一的登录方式，请先添加其他登录方式再解绑',
  },
  BINDING_TYPE_INVALID: { status: 400, en: 'Invalid binding type', zh: '无效的绑定类型' },
  EMAIL_BINDING_FLOW_INVALID: {
    status: 403,
    en: 'The email binding request is invalid or has expired',
    zh: '邮箱绑定请求无效或已过期',
  },
  EMAIL_BINDING_RESEND_WAIT: {
    status: 429,
    en: 'Please wait {seconds} seconds before requesting another code',
    zh: '请等待 {seconds} 秒后再重新发送验证码',
  },
  EMAIL_BINDING_CODE_INVALID: { status: 200, en: 'Verification code is incorrect or has expired', zh: '验证码错误或已过期' },
  EMAIL_BINDING_LOCKED: {
    status: 429,
    en: 'Too many wrong codes; start the email binding again',
    zh: '验证码错误次数过多，请重新发起邮箱绑定',
  },
  EMAIL_BINDING_DELIVERY_FAILED: {
    status: 200,
    en: 'The verification email could not be sent, please try again later',
    zh: '验证邮件发送失败，请稍后重试',
  },
  EMAIL_ALREADY_TAKEN: { status: 200, en: 'Email address is already in use', zh: '邮箱地址已被占用' },
  EMAIL_BINDING_PERSONAL_TOKEN: {
    status: 403,
    en: 'Email binding is not supported with a personal access token',
    zh: '不支持使用个人访问令牌绑定邮箱',
  },
  WECHAT_DISABLED: { status: 200, en: 'WeChat login and registration has not been enabled by administrator', zh: '管理员未开启通过微信登录以及注册' },
  WECHAT_CODE_INVALID: { status: 200, en: 'The WeChat code is invalid or has expired', zh: '微信验证码无效或已过期' },
  WECHAT_ALREADY_BOUND: { status: 200, en: 'This WeChat account has already been bound', zh: '该微信账号已被绑定' },
  WECHAT_UNAVAILABLE: { status: 502, en: 'The WeChat server could not be reached', zh: '无法连接微信服务器' },
  TELEGRAM_DISABLED: { status: 200, en: 'Telegram login has not been enabled by administrator', zh: '管理员未开启通过 Telegram 登录' },
  TELEGRAM_INVALID_REQUEST: { status: 200, en: 'Invalid Telegram login data', zh: '无效的 Telegram 登录数据' },
  TELEGRAM_ASSERTION_USED: { status: 403, en: 'This login credential has already been used', zh: '该登录凭据已被使用' },
  TELEGRAM_NOT_BOUND: {
    status: 200,
    en: 'This Telegram account is not bound to any user; bind it in your settings first',
    zh: '该 Telegram 账户未绑定用户，请先在设置中绑定',
  },
} satisfies ErrorCatalog;
