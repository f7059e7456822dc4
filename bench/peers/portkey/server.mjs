/**
 * The Portkey gateway peer of `npm run bench` (bench/relay.ts starts it with plain node, in its own process):
 * Portkey's own Node entry point (build/start-server.js, as `npx @portkey-ai/gateway` runs it) on a free
 * loopback port, headless. Callers name the provider and the upstream per request (x-portkey-provider,
 * x-portkey-custom-host); 127.0.0.1 is in its TRUSTED_CUSTOM_HOSTS. Reports {url} over IPC once the port
 * answers; stops on "stop" or when the parent goes away.
 */
import net from 'node:net';

const port = await new Promise((resolve) => {
  const probe = net.createServer().listen(0, '127.0.0.1', () => {
    const { port: free } = probe.address();
    probe.close(() => resolve(free));
  });
});

process.env.TRUSTED_CUSTOM_HOSTS ??= '127.0.0.1';
// PORTKEY_QUIET=1 (the chaos bench): its stack trace for every failed upstream call stays out of the output.
if (process.env.PORTKEY_QUIET === '1') console.error = () => {};
process.argv.push(`--port=${port}`, '--headless');
process.on('message', (m) => m === 'stop' && process.exit(0));
process.on('disconnect', () => process.exit(0));
// Its module listens at import (on every interface, as it ships) and then shows a 1 s spinner before it
// settles; the port answers before that.
import('@portkey-ai/gateway/build/start-server.js').catch((e) => {
  process.send?.({ error: e instanceof Error ? e.message : String(e) });
  process.exit(1);
});

for (let i = 0; i < 100; i++) {
  const up = await fetch(`http://127.0.0.1:${port}/`).then(
    () => true,
    () => false,
  );
  if (up) {
    process.send({ url: `http://127.0.0.1:${port}` });
    break;
  }
  await new Promise((r) => setTimeout(r, 100));
  if (i === 99) {
    process.send({ error: 'did not answer within 10 s' });
    process.exit(1);
  }
}
