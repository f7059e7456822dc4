import { Type } from '@sinclair/typebox';

/**
 * What the customer routes answer in `data`, with new-api's field names (src/contract/customer.ts;
 * documentation and the OpenAPI check).
 */

const Int = Type.Integer();
const Num = Type.Number();
const Str = Type.String();
const Bool = Type.Boolean();

const tokenSettings = {
  name: Str,
  expired_time: Type.Integer({ description: 'seconds since the epoch; -1: never' }),
  remain_quota: Int,
  unlimited_quota: Bool,
  model_limits_enabled: Bool,
  model_limits: Type.String({ description: 'model ids, comma separated' }),
  allow_ips: Type.String({ description: "IPs or CIDRs separated by commas or newlines; '' allows any" }),
  group: Str,
};

const tokenFields = {
  id: Int,
  user_id: Int,
  ...tokenSettings,
  status: Type.Integer({ description: '1 enabled, 2 disabled, 3 expired, 4 exhausted' }),
  created_time: Int,
  accessed_time: Type.Integer({ description: 'seconds since the epoch of the last call; 0: never used' }),
  used_quota: Int,
};

/** A token as every read shows it: the key masked. */
export const CustomerToken = Type.Object({ ...tokenFields, key: Type.String({ description: 'masked: first and last 4 characters' }) }, { $id: 'CustomerToken' });

/** The create answer: the token with its full key, shown this once. */
export const CreatedToken = Type.Object({ ...tokenFields, key: Type.String({ description: 'the full key, shown in this answer only' }) });

/** One row of new-api's log; type 1 top-up, 2 consume, 3 manage, 4 system, 5 error. */
export const CustomerLog = Type.Object(
  {
    id: Str,
    user_id: Int,
    username: Str,
    created_at: Int,
    type: Int,
    content: Str,
    token_name: Str,
    model_name: Str,
    quota: Int,
    prompt_tokens: Int,
    completion_tokens: Int,
    use_time: Int,
    is_stream: Bool,
    token_id: Int,
    request_id: Str,
    other: Str,
  },
  { $id: 'CustomerLog' },
);

export const LogStat = Type.Object({ quota: Int, rpm: Int, tpm: Int });

/** new-api's QuotaData: one user's calls of one model in one hour. */
export const UsageBucket = Type.Object({ user_id: Int, username: Str, model_name: Str, created_at: Int, count: Int, quota: Int, token_used: Int }, { $id: 'UsageBucket' });

export const TopupCode = Type.Object(
  {
    id: Int,
    name: Str,
    key: Type.String({ description: 'masked' }),
    status: Type.Integer({ description: '1 enabled, 2 disabled, 3 used' }),
    quota: Int,
    created_time: Int,
    redeemed_time: Int,
    used_user_id: Int,
    expired_time: Type.Integer({ description: 'seconds since the epoch; 0: never' }),
  },
  { $id: 'TopupCode' },
);

export const Topup = Type.Object(
  {
    id: Int,
    user_id: Int,
    amount: Int,
    money: Num,
    trade_no: Str,
    payment_method: Str,
    create_time: Int,
    complete_time: Int,
    status: Str,
  },
  { $id: 'Topup' },
);

export const ModelPrice = Type.Object(
  {
    model_name: Str,
    quota_type: Type.Integer({ description: '0: by tokens (model_ratio, completion_ratio); 1: per call (model_price, USD)' }),
    model_ratio: Num,
    model_price: Num,
    completion_ratio: Num,
    enable_groups: Type.Array(Str),
    owner_by: Str,
    supported_endpoint_types: Type.Array(Str),
  },
  { $id: 'ModelPrice' },
);

/** GET /api/user/self/groups: the caller's group with its ratio and description. */
export const UserGroups = Type.Record(Str, Type.Object({ ratio: Num, desc: Str }));

/** Balances beside an account user (new-api's user fields). */
export const balanceFields = { quota: Int, used_quota: Int, request_count: Int };
