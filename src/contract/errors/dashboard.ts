import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Errors of the routes new-api's dashboard needs beyond SPEC (AS01–AS04). HTTP 200 like the reference's handler checks. */
export const dashboardErrors = {
  SELF_UPDATE_INVALID: { status: 200, en: 'Invalid input: {detail}', zh: '输入不合法：{detail}' },
  SELF_ORIGINAL_PASSWORD_WRONG: { status: 200, en: 'The original password is incorrect', zh: '原密码错误' },
  SELF_PASSWORD_NOT_SET: {
    status: 200,
    en: 'This account has no password; set one through a password reset',
    zh: '该账户尚未设置密码，请通过重置密码设置',
  },
} satisfies ErrorCatalog;
