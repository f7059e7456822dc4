import { Type } from '@sinclair/typebox';

/**
 * What the account operations answer in `data` (documentation and the OpenAPI check; see `data` in
 * src/contract/types.ts). Schemas with an `$id` are shared components of the document.
 */

const Int = Type.Integer();
const Str = Type.String();
const Bool = Type.Boolean();

/** The safe view of a user (users/service.ts selfView). */
export const UserView = Type.Object(
  { id: Int, username: Str, display_name: Str, role: Int, status: Int, email: Str, group: Str, aff_code: Str, inviter_id: Int },
  { $id: 'UserView' },
);

/** One login session (sessions/service.ts sessionView). */
export const SessionView = Type.Object(
  { sid: Str, current: Bool, login_method: Str, ip: Str, user_agent: Str, created_at: Int, last_active_at: Int, expires_at: Int },
  { $id: 'Session' },
);

const rotation = { access_token: Str, token_type: Type.Literal('Bearer'), access_expires_at: Int, session: SessionView };

/** A new access token for the same session after its authority changed (two-factor, passkey, password). */
export const SessionRotation = Type.Object(rotation, { $id: 'SessionRotation' });

/** A login's or refresh's result: the access token, the session and the user (sessions/http.ts authBundle). */
export const AuthBundle = Type.Object({ ...rotation, user: UserView }, { $id: 'AuthBundle' });

/** A method that can pass a verification, and whether it can now. */
export const VerificationMethod = Type.Object(
  { method: Type.Union([Type.Literal('2fa'), Type.Literal('passkey'), Type.Literal('password'), Type.Literal('oauth')]), available: Bool, reason: Type.Optional(Str) },
  { $id: 'VerificationMethod' },
);

/** A first factor passed, a second one needed: the login-verification flow (A30, A26, A28/A29). */
export const LoginChallenge = Type.Object(
  { require_verification: Type.Literal(true), require_2fa: Type.Optional(Type.Literal(true)), flow_token: Str, expires_at: Int, methods: Type.Array(VerificationMethod) },
  { $id: 'LoginChallenge' },
);

/** A login's outcome: a session, or the second step it needs. */
export const LoginOutcome = Type.Union([AuthBundle, LoginChallenge]);

/** A single-use security proof for one scope (the X-Security-Proof header of a sensitive operation). */
export const SecurityProof = Type.Object({ proof_token: Str, expires_at: Int, method: Str, scope: Str }, { $id: 'SecurityProof' });

/** WebAuthn options for the browser (@simplewebauthn's JSON), with the flow to finish it. */
export const PasskeyChallenge = Type.Object(
  {
    flow_token: Str,
    expires_at: Int,
    options: Type.Object({ challenge: Str }, { additionalProperties: true }),
    rp_ids: Type.Optional(Type.Array(Str)),
  },
  { $id: 'PasskeyChallenge' },
);

/** A linked OAuth (or chat-bot) account. */
export const OAuthBinding = Type.Object(
  { provider_id: Str, provider_name: Str, provider_slug: Str, provider_icon: Str, provider_user_id: Str },
  { $id: 'OAuthBinding' },
);

/** An email-binding flow started or resent (A04, A03). */
export const EmailBindingFlow = Type.Object(
  { flow_token: Str, email: Str, current_email: Str, old_email_required: Bool, expires_at: Int, resend_at: Int, notification_warning: Bool },
  { $id: 'EmailBindingFlow' },
);

/** An OAuth callback (A01): a login, its second step, a binding or a step-up proof. */
export const OAuthCallbackResult = Type.Union([
  AuthBundle,
  LoginChallenge,
  Type.Object({ action: Type.Literal('bind'), provider: Str, notification_warning: Bool }),
  SecurityProof,
]);

/** Two-factor setup begun (A15): the secret, its QR code and the backup codes, until A14 confirms them. */
/** A15: `qr_code_data` is the text of the QR code (the otpauth URI, as the reference sends it); `qr_code_image` a PNG of it. */
export const TwoFactorSetup = Type.Object({ secret: Str, otpauth_uri: Str, qr_code_data: Str, qr_code_image: Str, backup_codes: Type.Array(Str), flow_token: Str, expires_at: Int });

/** The verification methods of a scope (A48; also the `data` of a refused proof). */
export const VerificationMethods = Type.Object(
  { scope: Str, methods: Type.Array(VerificationMethod), oauth_providers: Type.Array(Type.Object({ slug: Str, name: Str })), password_encryption_enabled: Bool },
  { $id: 'VerificationMethods' },
);

const customProvider = Type.Object({
  id: Str,
  name: Str,
  slug: Str,
  icon: Str,
  kind: Str,
  client_id: Str,
  authorization_endpoint: Str,
  scopes: Str,
  browser_login_supported: Bool,
});

/** AS01: new-api's /api/status fields this service fills from its configuration (dashboard/status.ts). */
export const SystemStatus = Type.Object({
  version: Str,
  start_time: Int,
  system_name: Str,
  logo: Str,
  footer_html: Str,
  server_address: Str,
  setup: Bool,
  register_enabled: Bool,
  password_login_enabled: Bool,
  password_register_enabled: Bool,
  email_verification: Bool,
  github_oauth: Bool,
  github_client_id: Str,
  discord_oauth: Bool,
  discord_client_id: Str,
  linuxdo_oauth: Bool,
  linuxdo_client_id: Str,
  linuxdo_minimum_trust_level: Int,
  oidc_enabled: Bool,
  oidc_client_id: Str,
  oidc_authorization_endpoint: Str,
  custom_oauth_providers: Type.Array(customProvider),
  telegram_oauth: Bool,
  telegram_bot_name: Str,
  wechat_login: Bool,
  wechat_qrcode: Str,
  passkey_login: Bool,
  passkey_display_name: Str,
  passkey_rp_id: Str,
  turnstile_check: Bool,
  turnstile_site_key: Str,
  user_agreement_enabled: Bool,
  privacy_policy_enabled: Bool,
  self_use_mode_enabled: Bool,
  demo_site_enabled: Bool,
  checkin_enabled: Bool,
  quota_per_unit: Int,
  display_in_currency: Bool,
  quota_display_type: Str,
  top_up_link: Str,
  docs_link: Str,
});

/** AS03: the reference's self profile (the user view, built-in bindings, quota counters). */
export const SelfProfile = Type.Object({
  ...UserView.properties,
  github_id: Str,
  discord_id: Str,
  oidc_id: Str,
  wechat_id: Str,
  telegram_id: Str,
  linux_do_id: Str,
  quota: Int,
  used_quota: Int,
  request_count: Int,
  aff_count: Int,
  aff_quota: Int,
  aff_history_quota: Int,
});

/*
 * Catalog codes each module's operations throw themselves (besides their auth class's, the kit's and a
 * refused proof's, which src/contract/openapi.ts adds); one list per module.
 */
const ISSUE = ['AUTH_SESSION_LIMIT', 'AUTH_SESSION_ISSUANCE_LIMIT'];
/** A login's first factor passed: the second step's challenge, or a session under the caps. */
const COMPLETE_LOGIN = [...ISSUE, 'SECURITY_METHOD_UNAVAILABLE'];
const TOTP = ['TWOFA_CODE_INVALID', 'TWOFA_NOT_ENABLED', 'SECURITY_VERIFICATION_FAILED', 'SECURITY_VERIFICATION_LOCKED'];
const SECOND_STEP = ['AUTH_FLOW_INVALID', 'AUTH_ORIGIN_FORBIDDEN', 'LOGIN_INVALID_PARAMETERS', 'SECURITY_PROOF_METHOD_MISMATCH', 'SECURITY_METHOD_UNAVAILABLE', ...TOTP, ...ISSUE];

export const moduleErrors = {
  login: ['LOGIN_FAILED', 'LOGIN_INVALID_PARAMETERS', 'PASSWORD_LOGIN_DISABLED', 'PASSWORD_ENCRYPTION_UNAVAILABLE', 'AUTH_USER_DISABLED', ...COMPLETE_LOGIN],
  sessions: ['AUTH_UNAUTHORIZED', 'AUTH_SESSION_MISMATCH', 'AUTH_REFRESH_RACE', 'AUTH_SESSION_REVOKED', 'AUTH_SESSION_ID_REQUIRED', 'AUTH_SESSION_NOT_FOUND', 'AUTH_USER_DISABLED'],
  secondStep: SECOND_STEP,
  verification: ['SECURITY_PROOF_SCOPE_MISMATCH', 'SECURITY_CONTEXT_INVALID', 'SECURITY_VERIFICATION_FLOW_REQUIRED', 'SECURITY_PROOF_METHOD_MISMATCH', 'SECURITY_METHOD_UNAVAILABLE', 'LOGIN_INVALID_PARAMETERS', 'PASSWORD_ENCRYPTION_UNAVAILABLE', 'AUTH_SESSION_REQUIRED', ...TOTP],
  users: ['REGISTER_DISABLED', 'PASSWORD_REGISTER_DISABLED', 'REGISTER_INVALID_INPUT', 'REGISTER_EMAIL_VERIFICATION_REQUIRED', 'REGISTER_VERIFICATION_CODE_INVALID', 'USERNAME_TAKEN', 'EMAIL_TAKEN', 'EMAIL_INVALID'],
  /** An admin acting on another user. */
  admin: ['USER_NOT_FOUND', 'USER_OUTRANKED'],
  twoFactor: ['TWOFA_SETUP_INVALID', 'TWOFA_ALREADY_ENABLED', 'AUTH_FLOW_INVALID', 'AUTH_SESSION_REQUIRED', ...TOTP],
  passkeys: ['PASSKEY_DISABLED', 'PASSKEY_NOT_REGISTERED', 'PASSKEY_ALREADY_REGISTERED', 'PASSKEY_RP_ID_INVALID', 'PASSKEY_VERIFICATION_FAILED', 'AUTH_FLOW_INVALID', 'AUTH_SESSION_REQUIRED', 'LOGIN_INVALID_PARAMETERS', 'SECURITY_PROOF_SCOPE_MISMATCH', 'SECURITY_CONTEXT_INVALID', 'SECURITY_METHOD_UNAVAILABLE', ...COMPLETE_LOGIN],
  email: ['EMAIL_INVALID', 'EMAIL_VERIFICATION_RATE_LIMITED', 'EMAIL_SEND_FAILED'],
  emailBinding: ['EMAIL_INVALID', 'EMAIL_ALREADY_TAKEN', 'EMAIL_BINDING_CODE_INVALID', 'EMAIL_BINDING_DELIVERY_FAILED', 'EMAIL_BINDING_FLOW_INVALID', 'EMAIL_BINDING_LOCKED', 'EMAIL_BINDING_PERSONAL_TOKEN', 'EMAIL_BINDING_RESEND_WAIT', 'AUTH_SESSION_REQUIRED'],
  reset: ['EMAIL_INVALID', 'EMAIL_SEND_FAILED', 'EMAIL_VERIFICATION_RATE_LIMITED', 'RESET_LINK_INVALID', 'RESET_PASSWORD_INVALID'],
  oauth: [
    'OAUTH_UNKNOWN_PROVIDER', 'OAUTH_PROVIDER_DISABLED', 'OAUTH_INVALID_REQUEST', 'OAUTH_BIND_LOGIN_REQUIRED', 'OAUTH_STATE_INVALID', 'OAUTH_FLOW_SESSION_MISMATCH',
    'OAUTH_PROVIDER_ERROR', 'OAUTH_EXCHANGE_FAILED', 'OAUTH_USER_DELETED', 'OAUTH_USER_BANNED', 'OAUTH_VERIFY_IDENTITY_MISMATCH', 'REGISTER_DISABLED',
    'ACCOUNT_ALREADY_BOUND', 'USERNAME_TAKEN', 'SECURITY_PROOF_SCOPE_MISMATCH', 'SECURITY_CONTEXT_INVALID', 'AUTH_SESSION_REQUIRED', ...COMPLETE_LOGIN,
  ],
  social: ['ACCOUNT_ALREADY_BOUND', 'USERNAME_TAKEN', 'WECHAT_DISABLED', 'WECHAT_CODE_INVALID', 'WECHAT_ALREADY_BOUND', 'WECHAT_UNAVAILABLE', 'TELEGRAM_DISABLED', 'TELEGRAM_INVALID_REQUEST', 'TELEGRAM_ASSERTION_USED', 'TELEGRAM_NOT_BOUND', 'REGISTER_DISABLED', 'OAUTH_USER_BANNED', ...COMPLETE_LOGIN],
  bindings: ['OAUTH_BINDING_NOT_FOUND', 'LAST_LOGIN_METHOD', 'BINDING_TYPE_INVALID', 'USER_NOT_FOUND', 'USER_OUTRANKED'],
  self: ['SELF_UPDATE_INVALID', 'SELF_ORIGINAL_PASSWORD_WRONG', 'SELF_PASSWORD_NOT_SET', 'AUTH_SESSION_REQUIRED'],
};
