import { CustomerRefusal, type CustomerPort } from '../../contract/customer.js';
import type { EdgeContext } from '../context.js';
import { tokenPart } from './tokens/service.js';
import { walletPart } from './wallet.js';

/** The methods of the port served by the edge's ledger (usage, top-up codes, prices: src/edge/customers/ledger/). */
type LedgerMethods = Exclude<keyof CustomerPort, keyof ReturnType<typeof walletPart> | keyof ReturnType<typeof tokenPart>>;

// Until the ledger part is composed in, its methods answer `unavailable` (never a wrong empty answer).
function ledgerNotServed(): Pick<CustomerPort, LedgerMethods> {
  const refuse = async (): Promise<never> => {
    throw new CustomerRefusal('unavailable', 'usage, top-up codes and prices are not served by this edge yet');
  };
  return { logs: refuse, logStat: refuse, usage: refuse, createCodes: refuse, listCodes: refuse, updateCode: refuse, setCodeStatus: refuse, deleteCode: refuse, redeem: refuse, topups: refuse, pricing: refuse, models: refuse };
}

/**
 * The customer port as the edge serves it (src/contract/customer.ts): an account user's wallet and tokens,
 * and the ledger's usage, top-up codes and prices. The account service holds it in process, or reaches it
 * over the edge's internal route.
 */
export function createCustomerPort(ctx: EdgeContext): CustomerPort {
  return { ...walletPart(ctx), ...tokenPart(ctx), ...ledgerNotServed() };
}
