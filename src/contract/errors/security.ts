import type { ErrorCatalog } from '../../kit/http/errors.js';

/**
 * Second factor, passkeys and step-up verification. Statuses follow the reference's
 * writeSecurityOperationError: most failures are HTTP 200 success:false; proof failures are 403.
 */
export const securityErrors = {
  AUTH_FLOW_INVALID: { status: 200, en: 'Verification flow expired', zh: '验证流程已过期，请重新登录' },
  SECURITY_VERIFICATION_FAILED: { status: 200, en: 'Verification failed. Please try again.', zh: '验证失败，请重试' },
  SECURITY_VERIFICATION_LOCKED: {
    status: 200,
    en: 'Two-factor authentication is temporarily locked.',
    zh: '两步验证已被临时锁定',
  },
  SECURITY_VERIFICATION_FLOW_REQUIRED: {
    status: 400,
    en: 'This method needs its own verification flow',
    zh: '该验证方式需要使用专门的验证流程',
  },
  SECURITY_CONTEXT_INVALID: { status: 400, en: 'Invalid verification context', zh: '验证上下文无效' },
  SECURITY_METHOD_UNAVAILABLE: { status: 403, en: 'No verification method is available', zh: '没有可用的验证方式' },
  SECURITY_ACTION_FORBIDDEN: { status: 403, en: 'This action is not allowed', zh: '不允许此操作' },
  SECURITY_PROOF_INVALID: { status: 403, en: 'Security proof is invalid', zh: '安全验证凭证无效' },
  SECURITY_PROOF_EXPIRED: { status: 403, en: 'Security proof has expired', zh: '安全验证凭证已过期' },
  SECURITY_PROOF_SCOPE_MISMATCH: { status: 403, en: 'Security proof is for another action', zh: '安全验证凭证与操作不符' },
  SECURITY_PROOF_METHOD_MISMATCH: { status: 403, en: 'Verification method is not allowed here', zh: '不支持该验证方式' },
  SECURITY_PROOF_CONSUMED: { status: 403, en: 'Security proof has already been used', zh: '安全验证凭证已被使用' },
  SECURITY_PROOF_CONTEXT_MISMATCH: {
    status: 403,
    en: 'Security proof does not match this request',
    zh: '安全验证凭证与请求内容不符',
  },
  TWOFA_SETUP_INVALID: { status: 409, en: 'Two-factor setup has expired, please start again', zh: '两步验证设置已过期，请重新开始' },
  TWOFA_CODE_INVALID: { status: 200, en: 'Verification code is incorrect', zh: '验证码错误' },
  TWOFA_ALREADY_ENABLED: { status: 200, en: 'Two-factor authentication is already enabled', zh: '用户已启用2FA' },
  TWOFA_NOT_ENABLED: {
    status: 200,
    en: 'Two-factor authentication is not enabled: enable two-factor in Security first',
    zh: '未启用两步验证：请先在“安全设置”中启用两步验证',
  },
  USER_TWOFA_NOT_ENABLED: { status: 200, en: 'The user has not enabled two-factor authentication', zh: '用户未启用2FA' },
  PASSKEY_DISABLED: {
    status: 200,
    en: 'Passkeys are not configured on this server: the operator sets PASSKEY_ENABLED=true, PASSKEY_RP_ID and PASSKEY_ORIGINS (docs/configuration.md)',
    zh: '服务器未配置通行密钥（Passkey）：运维人员需设置 PASSKEY_ENABLED=true、PASSKEY_RP_ID 和 PASSKEY_ORIGINS（见 docs/configuration.md）',
  },
  PASSKEY_NOT_REGISTERED: { status: 200, en: 'No passkey is registered', zh: '该用户尚未绑定 Passkey' },
  PASSKEY_ALREADY_REGISTERED: { status: 200, en: 'A passkey is already registered', zh: '已绑定 Passkey' },
  PASSKEY_RP_ID_INVALID: { status: 200, en: 'Passkey RP ID is not allowed', zh: 'Passkey RP ID 不被允许' },
  PASSKEY_VERIFICATION_FAILED: { status: 200, en: 'Passkey verification failed', zh: 'Passkey 验证失败' },
} satisfies ErrorCatalog;
