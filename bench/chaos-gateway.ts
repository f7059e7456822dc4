/**
 * The gateway of the chaos bench (bench/chaos.ts), in its own process (bench/relay-gateway-child.ts). Five
 * channels, one per upstream of the chaos fake BENCH_UPSTREAM_URL (/u1 … /u5), all serving `gpt-4o-mini` at
 * the same priority and weight (the relay's weighted random order); `auto_ban` 1, so their breakers act.
 * Relay settings: the defaults (breakers: 5 counted failures in 60 s, 30 s cooldown, 1 probe; backoff 50 ms
 * to 1 s) except the first-byte and idle deadlines, BENCH_CHAOS_DEADLINE_MS (as Portkey's request_timeout),
 * and GATEWAY_RETRY_TIMES 4 (a call may try all five channels, as Portkey's fallback tries its five targets).
 */
import { serveRelayGateway } from './relay-gateway-child.js';

const upstream = process.env.BENCH_UPSTREAM_URL!;
const deadline = process.env.BENCH_CHAOS_DEADLINE_MS ?? '1000';

serveRelayGateway({
  env: { GATEWAY_RELAY_FIRST_BYTE_TIMEOUT_MS: deadline, GATEWAY_RELAY_IDLE_TIMEOUT_MS: deadline, GATEWAY_RETRY_TIMES: '4' },
  modelRatios: { 'gpt-4o-mini': 0.075 },
  channels: ['u1', 'u2', 'u3', 'u4', 'u5'].map((name) => ({ name: `chaos-${name}`, base_url: `${upstream}/${name}`, models: 'gpt-4o-mini', key: 'sk-bench-chaos-key', auto_ban: 1 })),
});
