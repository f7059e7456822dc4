import type { Config } from '../../config/index.js';
import type { RelayPort } from '../../contract/relay.js';
import { AppError } from '../../kit/http/errors.js';
import { httpRelay } from './http-client.js';

/** Without a gateway relay every call is refused (503) and runs stay admitted until one is configured. */
const unavailable: RelayPort = {
  relay: async () => {
    throw new AppError('service_unavailable');
  },
  summaryOf: async () => {
    throw new AppError('service_unavailable');
  },
  prices: async () => {
    throw new AppError('service_unavailable');
  },
  countTokens: async () => {
    throw new AppError('service_unavailable');
  },
  // Runs are admitted on their model's reserve alone, and wait for a relay.
  quote: async () => ({ minimum: 0, estimate: null }),
};

/**
 * The relay the edge uses: the gateway's in the same process when main.ts hands it over, else the gateway's
 * internal API at EDGE_RELAY_URL with EDGE_RELAY_TOKEN_KEY, else none (`configured` false).
 */
export function relayFor(config: Config, inProcess?: RelayPort | null): { relay: RelayPort; configured: boolean } {
  if (inProcess) return { relay: inProcess, configured: true };
  const r = config.edge.runs;
  if (r.relayUrl && r.relayTokenKey) return { relay: httpRelay({ url: r.relayUrl, tokenKey: r.relayTokenKey, timeoutMs: r.timeoutMs }), configured: true };
  return { relay: unavailable, configured: false };
}
