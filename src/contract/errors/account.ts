import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Account errors: login, registration and sessions. Statuses are the reference system's. */
export const accountErrors = {
  AUTH_UNAUTHORIZED: { status: 401, en: 'Unauthorized, not logged in or the credential is invalid', zh: '未登录或凭证无效' },
  AUTH_TOKEN_EXPIRED: { status: 401, en: 'The access token has expired', zh: '访问令牌已过期' },
  AUTH_SESSION_REVOKED: { status: 401, en: 'The login session has been revoked or has expired', zh: '登录会话已失效' },
  AUTH_USER_DISABLED: { status: 401, en: 'User has been banned', zh: '用户已被封禁' },
  AUTH_EXPLICIT_IDENTITY: {
    status: 401,
    en: 'Header New-Api-User is missing or does not match the authenticated user',
    zh: 'New-Api-User 请求头缺失或与当前用户不符',
  },
  AUTH_INSUFFICIENT_PRIVILEGE: { status: 403, en: 'Insufficient privilege', zh: '权限不足' },
  AUTH_SESSION_MISMATCH: { status: 409, en: 'The session does not match X-Auth-Session', zh: '会话与 X-Auth-Session 不一致' },
  AUTH_REFRESH_RACE: { status: 409, en: 'A concurrent refresh won; please retry', zh: '刷新冲突，请重试' },
  AUTH_SESSION_LIMIT: {
    status: 409,
    en: 'Too many active login sessions; log out another device first',
    zh: '活跃登录会话过多，请先退出其他设备',
  },
  AUTH_SESSION_ISSUANCE_LIMIT: {
    status: 429,
    en: 'Too many logins in a short time; please try again later',
    zh: '短时间内登录次数过多，请稍后再试',
  },
  AUTH_ORIGIN_FORBIDDEN: { status: 403, en: 'request origin is not allowed', zh: '请求来源不被允许' },
  AUTH_SESSION_REQUIRED: { status: 403, en: 'a dashboard login session is required', zh: '需要浏览器登录会话' },
  AUTH_SESSION_ID_REQUIRED: { status: 400, en: 'Session id is required', zh: '缺少会话 ID' },
  AUTH_SESSION_NOT_FOUND: { status: 404, en: 'Session not found', zh: '会话不存在' },
  USER_NOT_FOUND: { status: 404, en: 'User not found', zh: '用户不存在' },
  USER_OUTRANKED: {
    status: 403,
    en: 'No permission to manage a user of the same or a higher role',
    zh: '无权操作同级或更高权限的用户',
  },
  USER_MANAGE_SELF: { status: 403, en: 'You cannot manage your own account here', zh: '不能在此管理自己的账户' },
  USER_ROOT_PROTECTED: { status: 403, en: 'A root user cannot be disabled, demoted or deleted', zh: '无法禁用、降级或删除超级管理员用户' },
  USER_CREATE_ROLE: { status: 403, en: 'You cannot create a user with a role equal to or above your own', zh: '无法创建权限大于等于自己的用户' },
  USER_INPUT_INVALID: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  USER_PROMOTE_ROOT_ONLY: { status: 403, en: 'Only a root user can promote users to admin', zh: '普通管理员用户无法提升其他用户为管理员' },
  USER_ALREADY_ADMIN: { status: 409, en: 'The user is already an admin', zh: '该用户已经是管理员' },
  USER_ALREADY_COMMON: { status: 409, en: 'The user is already a common user', zh: '该用户已经是普通用户' },
  LOGIN_FAILED: {
    status: 200,
    en: 'Username or password is incorrect, or user has been banned',
    zh: '用户名或密码错误，或用户已被封禁',
  },
  LOGIN_INVALID_PARAMETERS: { status: 200, en: 'Invalid parameters', zh: '无效的参数' },
  PASSWORD_LOGIN_DISABLED: {
    status: 200,
    en: 'Password login has been disabled by administrator',
    zh: '管理员关闭了密码登录',
  },
  REGISTER_DISABLED: {
    status: 200,
    en: 'New user registration has been disabled by administrator',
    zh: '管理员关闭了新用户注册',
  },
  PASSWORD_REGISTER_DISABLED: {
    status: 200,
    en: 'Password registration has been disabled by administrator, please use third-party account verification',
    zh: '管理员关闭了通过密码进行注册，请使用第三方账户验证的形式进行注册',
  },
  REGISTER_INVALID_INPUT: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  REGISTER_EMAIL_VERIFICATION_REQUIRED: {
    status: 200,
    en: 'Email verification is enabled, please enter email address and verification code',
    zh: '管理员开启了邮箱验证，请输入邮箱地址和验证码',
  },
  REGISTER_VERIFICATION_CODE_INVALID: {
    status: 200,
    en: 'Verification code is incorrect or has expired',
    zh: '验证码错误或已过期',
  },
  USERNAME_TAKEN: { status: 200, en: 'Username already exists or has been deleted', zh: '用户名已存在，或已注销' },
  EMAIL_TAKEN: { status: 200, en: 'Email address is already in use', zh: '邮箱地址已被占用' },
  SECURITY_PROOF_REQUIRED: { status: 403, en: 'Security verification is required', zh: '需要进行安全验证' },
  PASSWORD_ENCRYPTION_UNAVAILABLE: {
    status: 200,
    en: 'Database error, please contact the administrator',
    zh: '数据库错误，请联系管理员',
  },
} satisfies ErrorCatalog;
