import type { Generated } from 'kysely';

/** Table types of the account database. Timestamps are unix seconds. */
export interface UsersTable {
  id: Generated<number>;
  username: string;
  display_name: string;
  email: string | null;
  password_hash: string | null;
  role: number;
  status: number;
  group: string;
  aff_code: string;
  inviter_id: number | null;
  auth_version: number;
  access_token_hash: string | null;
  created_at: number;
  deleted_at: number | null;
}

export interface UserSessionsTable {
  sid: string;
  user_id: number;
  version: number;
  user_auth_version: number;
  status: 'active' | 'revoked';
  refresh_hash: string;
  previous_refresh_hash: string | null;
  previous_valid_until: number | null;
  recent_rotations: string | null;
  login_method: string;
  ip: string;
  user_agent: string;
  created_at: number;
  last_active_at: number;
  expires_at: number;
  revoked_at: number | null;
  revoked_reason: string | null;
}

export interface AccountOptionsTable {
  key: string;
  value: string;
  updated_at: number;
}

export interface AuthFlowsTable {
  token_hash: string;
  purpose: string;
  user_id: number | null;
  session_id: string | null;
  provider: string | null;
  intent: string | null;
  payload: string;
  attempts: number;
  created_at: number;
  expires_at: number;
  consumed_at: number | null;
}

export interface AccountDB {
  auth_flows: AuthFlowsTable;
  users: UsersTable;
  user_sessions: UserSessionsTable;
  account_options: AccountOptionsTable;
}

export const ROLE = { user: 1, admin: 10, root: 100 } as const;
export const USER_STATUS = { enabled: 1, disabled: 2 } as const;

export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
