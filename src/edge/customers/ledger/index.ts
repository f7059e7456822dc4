import type { CustomerPort } from '../../../contract/customer.js';
import type { RelayPort } from '../../../contract/relay.js';
import type { EdgeContext } from '../../context.js';
import { codePart } from './codes.js';
import { logPart } from './logs.js';
import { pricingPart } from './pricing.js';

export type LedgerMethods = Pick<
  CustomerPort,
  'logs' | 'logStat' | 'usage' | 'createCodes' | 'listCodes' | 'code' | 'updateCode' | 'setCodeStatus' | 'deleteCode' | 'deleteInvalidCodes' | 'redeem' | 'topups' | 'pricing' | 'models'
>;

/** The customer port's ledger: an account user's usage log, top-up codes, and the prices of the public models. */
export function ledgerPart(ctx: EdgeContext, relay: RelayPort): LedgerMethods {
  return { ...logPart(ctx), ...codePart(ctx), ...pricingPart(ctx, relay) };
}
