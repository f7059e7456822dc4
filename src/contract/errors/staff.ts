import type { ErrorCatalog } from '../../kit/http/errors.js';

/** Gateway staff administration from the console (GS06–GS15): identities, permissions, tokens, TOTP, audit. */
export const staffErrors = {
  STAFF_NOT_FOUND: { status: 404, en: 'No staff or service identity with this id', zh: '没有该 ID 的员工或服务身份' },
  STAFF_INVALID: { status: 400, en: 'Invalid staff request: {detail}', zh: '员工请求无效：{detail}' },
  STAFF_NAME_TAKEN: { status: 409, en: 'An identity with this name already exists', zh: '该名称的身份已存在' },
  STAFF_DISABLED: { status: 409, en: 'The identity is disabled: enable it first', zh: '该身份已禁用：请先启用' },
  STAFF_ROOT_HAS_ALL: { status: 400, en: 'A root identity holds every permission: grant and deny do not apply to it', zh: 'root 身份拥有全部权限：授予和拒绝对其不适用' },
  STAFF_SERVICE_NO_TOTP: { status: 400, en: 'Service identities cannot enroll a second factor', zh: '服务身份不能登记第二因素' },
  STAFF_TOKEN_NOT_FOUND: { status: 404, en: 'No live token with this id', zh: '没有该 ID 的有效令牌' },
  STAFF_SELF_DISABLE: { status: 409, en: 'You cannot disable yourself: another root must do it', zh: '不能禁用自己：请由另一位 root 操作' },
  STAFF_SELF_PERMISSION: { status: 409, en: 'You cannot change your own permissions', zh: '不能修改自己的权限' },
  STAFF_SELF_LAST_TOKEN: {
    status: 409,
    en: 'This would revoke your own last token and lock you out: issue yourself another token first',
    zh: '此操作会吊销您自己的最后一个令牌并将您锁定在外：请先为自己签发另一个令牌',
  },
  STAFF_STEP_UP_NOT_ENROLLED: {
    status: 403,
    en: 'Showing a secret needs your authenticator code, and you have no second factor: enroll it with npm run cli -- staff totp --name {name}',
    zh: '显示密钥需要验证器代码，而您尚未登记第二因素：请运行 npm run cli -- staff totp --name {name} 登记',
  },
} satisfies ErrorCatalog;
