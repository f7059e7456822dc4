import { Type, type TSchema } from '@sinclair/typebox';
import type { CustomerPort, CustomerRefusal } from './customer.js';

/**
 * The customer port over HTTP (src/contract/customer.ts): the edge's internal route ER01
 * `POST /internal/v1/customer/{method}` takes `{args: [...]}` (the method's arguments in order) and answers
 * `{result}`; a Map travels as an array of [key, value] entries. A refusal answers the code of its reason
 * (CUSTOMER_REFUSAL_CODES) with the port's detail in `error.detail`. The caller is the account service, with a
 * workload token (audience CUSTOMER_API_AUDIENCE, issuer CUSTOMER_API_ISSUER) from the loopback interface.
 */
export const CUSTOMER_API_PATH = '/internal/v1/customer';
/**
 * ER02: the playground chat (CustomerPort.playgroundChat) apart: body {userId, group, requestId, body}, the
 * language in Accept-Language; answers as the edge's /v1/chat/completions (the completion, its event stream,
 * or the edge's OpenAI-shaped error). Same workload token and loopback rule as ER01.
 */
export const CUSTOMER_PLAYGROUND_PATH = '/internal/v1/customer/playground/chat';
export const CUSTOMER_API_AUDIENCE = 'edge-customer';
export const CUSTOMER_API_ISSUER = 'account';

// JSON types only: the values (ids, amounts, lengths, batch sizes) are the port's to refuse, so a bad value is
// refused with the same detail co-hosted or apart.
const Num = Type.Number();
const Str = Type.String();
const Nums = Type.Array(Num);
const Page = Type.Object({ page: Num, size: Num });
const Settings = Type.Object({
  name: Str,
  expired_time: Num,
  remain_quota: Num,
  unlimited_quota: Type.Boolean(),
  model_limits_enabled: Type.Boolean(),
  model_limits: Str,
  allow_ips: Str,
  group: Str,
});
const logFilters = {
  userId: Type.Optional(Num),
  type: Type.Optional(Num),
  token_name: Type.Optional(Str),
  model_name: Type.Optional(Str),
  start_timestamp: Type.Optional(Num),
  end_timestamp: Type.Optional(Num),
};
const LogQuery = Type.Object({ ...logFilters, page: Num, size: Num });
const LogStatQuery = Type.Object(logFilters);
const UsageQuery = Type.Object({ userId: Type.Optional(Num), start_timestamp: Num, end_timestamp: Num });
const NewCodes = Type.Object({ name: Str, quota: Num, count: Num, expired_time: Num });
const CodeChange = Type.Object({ name: Str, quota: Num, expired_time: Num });

interface MethodWire {
  /** The arguments in order, as a JSON tuple. */
  args: TSchema[];
  /** The answer is a Map (sent as an array of entries). */
  map?: true;
}

/**
 * The fields of an OpenAI Chat Completions body the playground reads (the rest goes to the relay as sent), and
 * new-api's playground `group` (the caller's own group, or absent).
 */
export const PlaygroundChatBody = Type.Object(
  {
    model: Type.String({ minLength: 1, maxLength: 128 }),
    messages: Type.Array(Type.Object({ role: Type.String() }, { additionalProperties: true }), { minItems: 1 }),
    stream: Type.Optional(Type.Boolean()),
    group: Type.Optional(Type.String({ maxLength: 64 })),
  },
  { additionalProperties: true },
);

/** ER02's body: PlaygroundCall without its signal and language (those are the connection and Accept-Language). */
export const PlaygroundWireBody = Type.Object({
  userId: Type.Integer(),
  group: Type.String({ maxLength: 64 }),
  requestId: Type.String({ minLength: 1, maxLength: 64 }),
  body: PlaygroundChatBody,
});

/** The port's methods ER01 carries: all but the playground chat, which streams (ER02). */
export type CallableMethod = Exclude<keyof CustomerPort, 'playgroundChat'>;

/** Every method of CustomerPort ER01 carries and the shape of its arguments: the allow-list the edge dispatches by. */
export const CUSTOMER_PORT_WIRE = {
  balance: { args: [Num] },
  balances: { args: [Nums], map: true },
  setQuota: { args: [Num, Num, Str, Str] },
  grant: { args: [Num, Num, Str, Str, Str] },
  setUserEnabled: { args: [Num, Type.Boolean(), Str] },
  listTokens: { args: [Num, Page] },
  searchTokens: { args: [Num, Str, Str, Page] },
  token: { args: [Num, Num] },
  createToken: { args: [Num, Settings] },
  updateToken: { args: [Num, Num, Settings] },
  setTokenStatus: { args: [Num, Num, Num] },
  deleteTokens: { args: [Num, Nums] },
  revealKeys: { args: [Num, Nums], map: true },
  logs: { args: [LogQuery] },
  logStat: { args: [LogStatQuery] },
  usage: { args: [UsageQuery] },
  createCodes: { args: [NewCodes, Str] },
  listCodes: { args: [Str, Page] },
  code: { args: [Num] },
  updateCode: { args: [Num, CodeChange, Str] },
  setCodeStatus: { args: [Num, Num, Str] },
  deleteCode: { args: [Num, Str] },
  deleteInvalidCodes: { args: [Str] },
  redeem: { args: [Num, Str] },
  topups: { args: [Num, Page] },
  pricing: { args: [] },
  models: { args: [Num, Str] },
} satisfies Record<CallableMethod, MethodWire>;

export type CustomerMethod = keyof typeof CUSTOMER_PORT_WIRE;

export function isCustomerMethod(name: string): name is CustomerMethod {
  return Object.hasOwn(CUSTOMER_PORT_WIRE, name);
}

/** The edge's catalog code of each refusal reason (src/contract/errors/customer-api.ts). */
export const CUSTOMER_REFUSAL_CODES = {
  not_found: 'customer_not_found',
  invalid: 'customer_invalid',
  key_already_shown: 'customer_key_already_shown',
  code_invalid: 'customer_code_invalid',
  insufficient: 'customer_insufficient',
  unavailable: 'customer_unavailable',
} as const satisfies Record<CustomerRefusal['reason'], string>;

/** The refusal reason of an edge error code, or null when the code is not a refusal. */
export function refusalReasonOf(code: string): CustomerRefusal['reason'] | null {
  const hit = Object.entries(CUSTOMER_REFUSAL_CODES).find(([, c]) => c === code);
  return hit ? (hit[0] as CustomerRefusal['reason']) : null;
}
