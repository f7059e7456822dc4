import { kitErrors, type ErrorCatalog } from '../../kit/http/errors.js';
import { accountErrors } from './account.js';
import { gatewayErrors } from './gateway.js';
import { securityErrors } from './security.js';
import { oauthErrors } from './oauth.js';
import { upstreamErrors } from './upstream.js';
import { pluginErrors } from './plugins.js';
import { edgeErrors } from './edge.js';
import { relayErrors } from './relay.js';
import { dashboardErrors } from './dashboard.js';
import { staffErrors } from './staff.js';
import { customerApiErrors } from './customer-api.js';

const parts: ErrorCatalog[] = [kitErrors, accountErrors, gatewayErrors, securityErrors, oauthErrors, upstreamErrors, pluginErrors, edgeErrors, relayErrors, dashboardErrors, staffErrors, customerApiErrors];

function merge(list: ErrorCatalog[]): ErrorCatalog {
  const all: ErrorCatalog = {};
  for (const part of list) {
    for (const [code, def] of Object.entries(part)) {
      if (all[code]) throw new Error(`error code ${code} is declared twice`);
      all[code] = def;
    }
  }
  return all;
}

/** The one error catalog: every failure code with its HTTP status and messages (English, Chinese). */
export const errorCatalog = merge(parts);
