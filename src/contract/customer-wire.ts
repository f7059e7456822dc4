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
export const CUSTOMER_API_AUDIENCE = 'edge-customer';
export const CUSTOMER_API_ISSUER = 'account';

const Id = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER });
const Int = Type.Integer({ minimum: -Number.MAX_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER });
const Text = Type.String({ maxLength: 4096 });
const Ids = Type.Array(Id, { maxItems: 1000 });
const Page = Type.Object({ page: Type.Integer({ minimum: 1 }), size: Type.Integer({ minimum: 1, maximum: 1000 }) });
const Settings = Type.Object({
  name: Text,
  expired_time: Int,
  remain_quota: Int,
  unlimited_quota: Type.Boolean(),
  model_limits_enabled: Type.Boolean(),
  model_limits: Type.String({ maxLength: 65_536 }),
  allow_ips: Type.String({ maxLength: 65_536 }),
  group: Text,
});
const logFilters = {
  userId: Type.Optional(Id),
  type: Type.Optional(Int),
  token_name: Type.Optional(Text),
  model_name: Type.Optional(Text),
  start_timestamp: Type.Optional(Int),
  end_timestamp: Type.Optional(Int),
};
const LogQuery = Type.Object({ ...logFilters, page: Page.properties.page, size: Page.properties.size });
const LogStatQuery = Type.Object(logFilters);
const UsageQuery = Type.Object({ userId: Type.Optional(Id), start_timestamp: Int, end_timestamp: Int });
const NewCodes = Type.Object({ name: Text, quota: Int, count: Type.Integer({ minimum: 0, maximum: 1000 }), expired_time: Int });
const CodeChange = Type.Object({ name: Text, quota: Int, expired_time: Int });

interface MethodWire {
  /** The arguments in order, as a JSON tuple. */
  args: TSchema[];
  /** The answer is a Map (sent as an array of entries). */
  map?: true;
}

/** Every method of CustomerPort and the shape of its arguments: the allow-list the edge dispatches by. */
export const CUSTOMER_PORT_WIRE = {
  balance: { args: [Id] },
  balances: { args: [Ids], map: true },
  setQuota: { args: [Id, Int, Text, Text] },
  grant: { args: [Id, Int, Text, Text, Text] },
  listTokens: { args: [Id, Page] },
  searchTokens: { args: [Id, Text, Text, Page] },
  token: { args: [Id, Id] },
  createToken: { args: [Id, Settings] },
  updateToken: { args: [Id, Id, Settings] },
  setTokenStatus: { args: [Id, Id, Int] },
  deleteTokens: { args: [Id, Ids] },
  revealKeys: { args: [Id, Ids], map: true },
  logs: { args: [LogQuery] },
  logStat: { args: [LogStatQuery] },
  usage: { args: [UsageQuery] },
  createCodes: { args: [NewCodes, Text] },
  listCodes: { args: [Text, Page] },
  updateCode: { args: [Id, CodeChange, Text] },
  setCodeStatus: { args: [Id, Int, Text] },
  deleteCode: { args: [Id, Text] },
  redeem: { args: [Id, Text] },
  topups: { args: [Id, Page] },
  pricing: { args: [] },
  models: { args: [Id] },
} satisfies Record<keyof CustomerPort, MethodWire>;

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
