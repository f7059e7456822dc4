// Fails (exit 1) unless the PostgreSQL and Redis named by TEST_POSTGRES_URL / TEST_REDIS_URL answer.
import net from 'node:net';

async function reachable(url, defaultPort) {
  const u = new URL(url);
  return new Promise((resolve) => {
    const socket = net.connect({ host: u.hostname, port: Number(u.port || defaultPort), timeout: 3000 });
    socket.once('connect', () => (socket.destroy(), resolve(true)));
    socket.once('error', () => resolve(false));
    socket.once('timeout', () => (socket.destroy(), resolve(false)));
  });
}

let ok = true;
for (const [name, url, port] of [['PostgreSQL', process.env.TEST_POSTGRES_URL, 5432], ['Redis', process.env.TEST_REDIS_URL, 6379]]) {
  if (!url) {
    console.error(`${name}: no URL set`);
    ok = false;
  } else if (!(await reachable(url, port))) {
    console.error(`${name}: unreachable at ${url}`);
    ok = false;
  } else console.log(`${name}: reachable at ${url}`);
}
if (!ok) process.exit(1);
