import fs from 'node:fs';
import path from 'node:path';

const GATEWAY = path.resolve(import.meta.dirname, '../../src/gateway');

/**
 * A golden file of the relay's converters, kept beside them: `<family>/<name>` a provider's
 * (src/gateway/providers/<family>/fixtures), `caller-<format>/<name>` a caller format's
 * (src/gateway/relay/formats/<format>/fixtures).
 */
export function relayFixture(name: string): string {
  const [dir, ...rest] = name.split('/');
  const caller = /^caller-(.+)$/.exec(dir!);
  const home = caller ? path.join(GATEWAY, 'relay/formats', caller[1]!, 'fixtures') : path.join(GATEWAY, 'providers', dir!, 'fixtures');
  return fs.readFileSync(path.join(home, ...rest), 'utf8');
}
