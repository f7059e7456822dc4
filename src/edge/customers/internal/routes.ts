import { Type, type TSchema } from '@sinclair/typebox';
import { TypeCompiler, type TypeCheck } from '@sinclair/typebox/compiler';
import { CustomerRefusal, type CustomerPort } from '../../../contract/customer.js';
import { CUSTOMER_PORT_WIRE, CUSTOMER_REFUSAL_CODES, isCustomerMethod, type CustomerMethod } from '../../../contract/customer-wire.js';
import { implement } from '../../../contract/types.js';
import { AppError } from '../../../kit/http/errors.js';

const params = Type.Object({ method: Type.String({ minLength: 1, maxLength: 64 }) });
const body = Type.Object({ args: Type.Array(Type.Unknown(), { maxItems: 16 }) });
const answer = Type.Object({ result: Type.Optional(Type.Unknown({ description: "The method's answer; a Map as an array of [key, value] entries; absent for none" })) });

/** Each method's arguments as one tuple, compiled on first use. */
const checks = new Map<CustomerMethod, TypeCheck<any>>();
function argsCheck(method: CustomerMethod): TypeCheck<any> {
  let check = checks.get(method);
  if (!check) checks.set(method, (check = TypeCompiler.Compile(Type.Tuple(CUSTOMER_PORT_WIRE[method].args as TSchema[]))));
  return check;
}

/** Where in the arguments the first mismatch is, without their values (a key or a code may be among them). */
function mismatchOf(check: TypeCheck<any>, args: unknown[]): string {
  const first = check.Errors(args).First();
  return first ? `${first.path || '/'}: ${first.message}` : 'not accepted';
}

/**
 * ER01: one call of the customer port for the account service in another process. Dispatches only to the
 * port's methods (src/contract/customer-wire.ts), after checking their arguments; a refusal answers its
 * reason's code carrying the port's detail.
 */
export function customerApiRoutes(port: CustomerPort) {
  return [
    implement('ER01', {
      schema: { params, body },
      noStore: true,
      answers: { 200: { description: "The method's answer", schema: answer } },
      // service_unavailable: a write (a quota, a grant, a key switch, a new token, a redemption) still
      // deadlocked after its retries, or whose lock wait timed out (transactionWithRetry).
      errors: ['customer_api_unknown_method', 'customer_api_bad_arguments', 'service_unavailable', ...Object.values(CUSTOMER_REFUSAL_CODES)],
      handler: async (req) => {
        const method = req.params.method;
        if (!isCustomerMethod(method)) throw new AppError('customer_api_unknown_method', { params: { method: method.slice(0, 64) } });
        const args = req.body.args;
        const check = argsCheck(method);
        if (!check.Check(args)) throw new AppError('customer_api_bad_arguments', { params: { method, detail: mismatchOf(check, args) } });
        let result: unknown;
        try {
          result = await (port[method] as (...a: unknown[]) => Promise<unknown>).apply(port, args);
        } catch (e) {
          throw e instanceof CustomerRefusal ? refusal(e) : e;
        }
        return { result: result instanceof Map ? [...result] : result };
      },
    }),
  ];
}

/** A refusal of the port as its reason's catalog code, carrying the port's detail. */
export function refusal(e: CustomerRefusal): AppError {
  return new AppError(CUSTOMER_REFUSAL_CODES[e.reason], { params: { detail: e.detail }, data: { refusalDetail: e.detail } });
}
