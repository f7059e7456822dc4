/**
 * The gateway of the relay bench (bench/relay.ts), in its own process (bench/relay-gateway-child.ts). Two
 * channels point at the fake upstream BENCH_UPSTREAM_URL: `gpt-4o-mini` at its root, `bench-paced` under
 * /paced (chunks one every 100 ms); both models are priced.
 */
import { serveRelayGateway } from './relay-gateway-child.js';

const upstream = process.env.BENCH_UPSTREAM_URL!;

serveRelayGateway({
  modelRatios: { 'gpt-4o-mini': 0.075, 'bench-paced': 0.075 },
  channels: [
    { name: 'bench-fake', base_url: upstream, models: 'gpt-4o-mini', key: 'sk-bench-relay-key' },
    { name: 'bench-paced', base_url: `${upstream}/paced`, models: 'bench-paced', key: 'sk-bench-relay-key' },
  ],
});
