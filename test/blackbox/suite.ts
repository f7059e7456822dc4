import { after, before, describe } from 'node:test';
import { chargeCases } from './cases/charges.js';
import { idorCases } from './cases/idor.js';
import { importCases } from './cases/imported.js';
import { concurrencyCases, refusalCases } from './cases/refusals.js';
import { secretCases } from './cases/secrets.js';
import { tokenCases } from './cases/tokens.js';
import { topupCases } from './cases/topup.js';
import type { Mode } from './product.js';
import { startProduct, type Product } from './stack.js';

/**
 * The black-box acceptance of issue 30 ("Customers serve themselves"): the product started as an operator runs
 * it, driven over HTTP only, with a fake OpenAI upstream. The cases run in order on one product.
 */
export function customerSuite(mode: Mode) {
  describe(`customers, black box (${mode})`, () => {
    let p: Product | undefined;
    before(async () => {
      p = await startProduct(mode);
    });
    after(() => p?.close());
    const product = () => {
      if (!p) throw new Error('the product did not start');
      return p;
    };
    tokenCases(product);
    chargeCases(product);
    refusalCases(product);
    concurrencyCases(product);
    idorCases(product);
    topupCases(product);
    importCases(product);
    secretCases(product);
  });
}
