/**
 * The customer port: how the account service reaches an account user's keys, wallet, usage and top-up codes
 * on the edge (new-api's customer API, issue 30). The edge implements it (src/edge/customers/); main.ts hands
 * it to the account service in process, or the account service reaches it over the edge's internal route
 * with a short-lived workload token (src/account/customers/http-port.ts). `account/` and `edge/` share only
 * these types. Money is in wallet units, new-api's quota units: 500,000 units = 1 USD.
 *
 * An account user is the edge owner named `account-<userId>` (customerOwnerName); the edge creates it (and its
 * wallet) on first use. Owner names with that prefix are the account's: the CLI and the gateway console may
 * credit them but never create one.
 */
import type { CancelSignal } from '../kit/http/cancel-signal.js';

export const CUSTOMER_OWNER_PREFIX = 'account-';

export function customerOwnerName(userId: number): string {
  return `${CUSTOMER_OWNER_PREFIX}${userId}`;
}

/** The account user id of an owner name made by customerOwnerName, else null. */
export function customerUserIdOf(owner: string): number | null {
  const m = /^account-([1-9]\d{0,14})$/.exec(owner);
  return m ? Number(m[1]) : null;
}

/** new-api's token status: 1 enabled, 2 disabled, 3 expired, 4 exhausted. */
export const TOKEN_STATUS = { enabled: 1, disabled: 2, expired: 3, exhausted: 4 } as const;

/** What a customer sets on a token (new-api's fields, same names and meaning). */
export interface TokenSettings {
  /** 1–50 characters. */
  name: string;
  /** Seconds since the epoch; -1: never. */
  expired_time: number;
  /** Units the token may still spend when not unlimited. */
  remain_quota: number;
  unlimited_quota: boolean;
  model_limits_enabled: boolean;
  /** Public model ids, comma separated (new-api's form). */
  model_limits: string;
  /** IPs or CIDRs, separated by commas or newlines; '' allows any. */
  allow_ips: string;
  /** '' : the user's group. */
  group: string;
}

/** A token as every read shows it: the key masked (never the secret). */
export interface CustomerToken extends TokenSettings {
  id: number;
  user_id: number;
  /** Masked: the first 4 and last 4 characters around asterisks (new-api's MaskTokenKey). */
  key: string;
  status: number;
  created_time: number;
  /** Seconds since the epoch of the last call; 0: never used. */
  accessed_time: number;
  used_quota: number;
}

/** A token just created: `key` is the full key, shown in this answer or on the first reveal after it. */
export interface CreatedToken {
  token: CustomerToken;
  key: string;
}

export interface Page<T> {
  items: T[];
  total: number;
}

/** 1-based page and its size (new-api's `p` and `page_size`). */
export interface PageQuery {
  page: number;
  size: number;
}

/** The account user's wallet in new-api's terms. */
export interface CustomerBalance {
  /** Available units (balance - reserved). */
  quota: number;
  used_quota: number;
  request_count: number;
}

/** new-api's log types: 1 top-up, 2 consume, 3 manage, 4 system, 5 error. */
export const LOG_TYPE = { topup: 1, consume: 2, manage: 3, system: 4, error: 5 } as const;

/** One row of new-api's log (`/api/log/self`, `/api/log/`). */
export interface CustomerLog {
  /** A run id or a credit id: unique within the log, opaque. */
  id: string;
  user_id: number;
  /** Seconds since the epoch. */
  created_at: number;
  type: number;
  content: string;
  token_name: string;
  model_name: string;
  quota: number;
  prompt_tokens: number;
  completion_tokens: number;
  /** Whole seconds the call took. */
  use_time: number;
  is_stream: boolean;
  token_id: number;
  request_id: string;
}

export interface LogQuery extends PageQuery {
  /** Absent: every user (admin reads). */
  userId?: number;
  /** 0 or absent: every type. */
  type?: number;
  token_name?: string;
  model_name?: string;
  /** Seconds since the epoch, inclusive. */
  start_timestamp?: number;
  end_timestamp?: number;
}

/** new-api's `/api/log/self/stat`: units spent, and calls and tokens of the last minute. */
export interface LogStat {
  quota: number;
  rpm: number;
  tpm: number;
}

/** new-api's QuotaData row (`/api/data/self`): calls of one user and model in one hour. */
export interface UsageBucket {
  user_id: number;
  model_name: string;
  /** Start of the hour, seconds since the epoch. */
  created_at: number;
  count: number;
  quota: number;
  token_used: number;
}

/** new-api's redemption status: 1 enabled, 2 disabled, 3 used. */
export const CODE_STATUS = { enabled: 1, disabled: 2, used: 3 } as const;

/** A top-up code as listed: its key masked (stored hashed; the keys are shown once, when created). */
export interface TopupCode {
  id: number;
  name: string;
  key: string;
  status: number;
  quota: number;
  created_time: number;
  redeemed_time: number;
  used_user_id: number;
  /** Seconds since the epoch; 0: never. */
  expired_time: number;
}

export interface NewTopupCodes {
  name: string;
  quota: number;
  count: number;
  expired_time: number;
}

/** A redemption of the user: what `GET /api/user/topup/self` lists. */
export interface Topup {
  id: number;
  user_id: number;
  amount: number;
  /** USD the amount is worth (amount / 500,000). */
  money: number;
  trade_no: string;
  payment_method: 'redemption' | 'import';
  create_time: number;
  complete_time: number;
  status: 'success';
}

/** One public model's prices (new-api's `/api/pricing` row). */
export interface ModelPrice {
  model_name: string;
  /** 0: priced by tokens (model_ratio, completion_ratio); 1: per call (model_price, USD). */
  quota_type: 0 | 1;
  model_ratio: number;
  model_price: number;
  completion_ratio: number;
  enable_groups: string[];
}

export interface Pricing {
  models: ModelPrice[];
  group_ratio: Record<string, number>;
}

/** Who changes money or codes, as the edge's audit log names them: `account:<userId>` or `system:<what>`. */
export type CustomerActor = string;

/**
 * A request the edge refuses. Reasons: `not_found` (no such token or code of this user), `invalid` (a bad
 * value, with the detail), `key_already_shown` (a key's one showing is past), `code_invalid` (unknown,
 * disabled, expired or used top-up code: one answer for all, so codes cannot be probed), `insufficient`
 * (an adjustment below what the wallet holds for running calls), `unavailable` (the edge cannot be reached).
 */
export class CustomerRefusal extends Error {
  constructor(
    readonly reason: 'not_found' | 'invalid' | 'key_already_shown' | 'code_invalid' | 'insufficient' | 'unavailable',
    readonly detail: string,
  ) {
    super(detail);
  }
}

export interface CustomerPort {
  // Wallet
  balance(userId: number): Promise<CustomerBalance>;
  /** The balances of these users (an unknown user: zeros). */
  balances(userIds: number[]): Promise<Map<number, CustomerBalance>>;
  /**
   * Sets the user's balance to `quota` units (new-api's admin edit), as one audited wallet movement with a
   * reason; a log row of type 3. Refused (`insufficient`) below what running calls hold.
   */
  setQuota(userId: number, quota: number, by: CustomerActor, reason: string): Promise<CustomerBalance>;
  /** Adds units once per credit id (the starting balance, an import): a retry adds nothing. */
  grant(userId: number, amount: number, creditId: string, by: CustomerActor, reason: string): Promise<CustomerBalance>;

  /**
   * Turns every key of the user off (false) or on again (true), as the account disables and enables the user:
   * while off the edge refuses each key on its next call (403 user_disabled) whatever its token's own status,
   * and turning it on restores exactly those statuses (a token the user disabled stays disabled). A repeat
   * changes nothing; a change is audited. Turning off a user the edge has not met yet records it, so a key
   * added later (an import) is refused too.
   */
  setUserEnabled(userId: number, enabled: boolean, by: CustomerActor): Promise<void>;

  // Tokens (every method checks the token belongs to userId: another user's id is not_found)
  listTokens(userId: number, page: PageQuery): Promise<Page<CustomerToken>>;
  /** By name (substring) and/or by key (the full key or its masked form's visible ends). */
  searchTokens(userId: number, keyword: string, key: string, page: PageQuery): Promise<Page<CustomerToken>>;
  token(userId: number, id: number): Promise<CustomerToken>;
  createToken(userId: number, settings: TokenSettings): Promise<CreatedToken>;
  updateToken(userId: number, id: number, settings: TokenSettings): Promise<CustomerToken>;
  /** Enables or disables (new-api's `status_only`); enabling an expired or exhausted token is `invalid`. */
  setTokenStatus(userId: number, id: number, status: number): Promise<CustomerToken>;
  /** Deletes (revokes) the user's tokens of these ids; answers how many were deleted. */
  deleteTokens(userId: number, ids: number[]): Promise<number>;
  /** The full keys of tokens whose one showing has not happened yet; key_already_shown for any other. */
  revealKeys(userId: number, ids: number[]): Promise<Map<number, string>>;

  // Usage
  logs(q: LogQuery): Promise<Page<CustomerLog>>;
  logStat(q: Omit<LogQuery, 'page' | 'size'>): Promise<LogStat>;
  usage(q: { userId?: number; start_timestamp: number; end_timestamp: number }): Promise<UsageBucket[]>;

  // Top-up codes
  /** Creates `count` codes; answers their keys, shown this once. */
  createCodes(c: NewTopupCodes, by: CustomerActor): Promise<string[]>;
  listCodes(keyword: string, page: PageQuery): Promise<Page<TopupCode>>;
  /** One code that is not deleted (its key masked), else not_found. */
  code(id: number): Promise<TopupCode>;
  updateCode(id: number, c: { name: string; quota: number; expired_time: number }, by: CustomerActor): Promise<TopupCode>;
  setCodeStatus(id: number, status: number, by: CustomerActor): Promise<TopupCode>;
  deleteCode(id: number, by: CustomerActor): Promise<void>;
  /** Deletes every used, disabled or expired code (new-api's DeleteInvalidRedemptions); answers how many. */
  deleteInvalidCodes(by: CustomerActor): Promise<number>;
  /** Credits the code's quota to the user exactly once (code_invalid otherwise); answers the amount. */
  redeem(userId: number, key: string): Promise<number>;
  topups(userId: number, page: PageQuery): Promise<Page<Topup>>;

  // Prices
  /** Every enabled public model's prices and the group ratios. */
  pricing(): Promise<Pricing>;
  /** The public model ids a user may call (every enabled public model), or those of one channel group ('' for all). */
  models(userId: number, group: string): Promise<string[]>;

  // The playground (new-api's /pg/chat/completions)
  /**
   * One OpenAI chat call of the user, as any call of a key: reserved in the user's wallet, relayed, settled
   * exactly once; logged under the temporary token `playground-<group>` (no key). A refusal of the edge (an
   * empty wallet, an unknown model, too many calls…) is an answer, rendered in OpenAI's shape in `lang`.
   * Not over ER01: apart, it has its own streaming route (ER02, CUSTOMER_PLAYGROUND_PATH).
   */
  playgroundChat(call: PlaygroundCall): Promise<PlaygroundAnswer>;
}

/** A playground chat of an account user. */
export interface PlaygroundCall {
  userId: number;
  /** The user's group: names the temporary token (`playground-<group>`). */
  group: string;
  /** An OpenAI Chat Completions body (`stream: true` for server-sent events). */
  body: Record<string, unknown>;
  /** The account's request id, kept with the call. */
  requestId: string;
  /** The language of a refusal's message. */
  lang: 'en' | 'zh';
  /** Aborts the call (the browser went away). */
  signal: CancelSignal;
}

/** OpenAI's error object ({error: …}), as the edge answers it. */
export interface ChatError {
  message: string;
  type: string;
  code: string;
  param: string | null;
}

export type PlaygroundAnswer =
  /** The chat completion's JSON text, as the upstream's answer came through the relay. */
  | { kind: 'json'; body: string }
  /** The server-sent events, piece by piece, pulled at the reader's pace. */
  | { kind: 'stream'; contentType: string; pieces: AsyncIterable<string> }
  /** Refused or failed before any output: the status and error the edge answers a key's call with (and when to retry, in seconds, for a rate limit). */
  | { kind: 'refused'; status: number; error: ChatError; retryAfter?: number };

/** The port as the account service holds it: filled once the edge is built in this process or reachable over HTTP, null otherwise. */
export interface CustomerHolder {
  port: CustomerPort | null;
}
