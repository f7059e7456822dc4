// Fails (exit 1) unless the PostgreSQL, MySQL/MariaDB and Redis named by TEST_POSTGRES_URL, TEST_MYSQL_URL and
// TEST_REDIS_URL answer. A local MariaDB/MySQL that is installed but stopped is started once (service or
// systemctl, with sudo when not root) before giving up.
import { execFileSync } from 'node:child_process';
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

function local(url) {
  return ['127.0.0.1', 'localhost', '::1', '[::1]'].includes(new URL(url).hostname);
}

/** Tries to start a local MariaDB/MySQL server; true when some start command succeeded. */
function startMysql() {
  const sudo = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const attempts = [['service', 'mariadb', 'start'], ['service', 'mysql', 'start'], ['systemctl', 'start', 'mariadb'], ['systemctl', 'start', 'mysql']];
  for (const cmd of attempts) {
    const [file, ...args] = [...sudo, ...cmd];
    try {
      execFileSync(file, args, { stdio: 'ignore', timeout: 60000 });
      return true;
    } catch {
      /* next way */
    }
  }
  return false;
}

let ok = true;
const services = [
  ['PostgreSQL', process.env.TEST_POSTGRES_URL, 5432],
  ['MySQL/MariaDB', process.env.TEST_MYSQL_URL, 3306],
  ['Redis', process.env.TEST_REDIS_URL, 6379],
];
for (const [name, url, port] of services) {
  if (!url) {
    console.error(`${name}: no URL set`);
    ok = false;
    continue;
  }
  let up = await reachable(url, port);
  if (!up && name === 'MySQL/MariaDB' && local(url)) {
    console.error(`${name}: unreachable at ${url}; trying to start the local server`);
    if (startMysql()) for (let i = 0; i < 30 && !(up = await reachable(url, port)); i++) await new Promise((r) => setTimeout(r, 1000));
  }
  if (up) console.log(`${name}: reachable at ${url}`);
  else {
    console.error(`${name}: unreachable at ${url}${name === 'MySQL/MariaDB' ? ' (install and start MariaDB 10.11+ or MySQL 8, or set TEST_MYSQL_URL)' : ''}`);
    ok = false;
  }
}
if (!ok) process.exit(1);
