// OWASP ASVS 5.0 documentation items (6.1.x, 7.1.x): docs/security.md against the configuration and the code.
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { loadConfig } from '../../src/config/index.js';
import { PRODUCT_WORDS } from '../../src/account/users/password-policy.js';
import { LOCK_SECONDS, MAX_FAILED_ATTEMPTS } from '../../src/account/two-factor/service.js';
import { CODE_MAX_ATTEMPTS } from '../../src/account/email/service.js';

const doc = fs.readFileSync('docs/security.md', 'utf8');
const defaults = loadConfig({});

/** The paragraph of the "Documented controls" list that starts with `title`. */
function control(title: string): string {
  const start = doc.indexOf(`- **${title}`);
  assert.ok(start >= 0, `docs/security.md documents "${title}"`);
  const end = doc.indexOf('\n- **', start + 1);
  return doc.slice(start, end < 0 ? undefined : end).replace(/\s+/g, ' ');
}

/** The default the text gives for a variable: "`NAME` (default X)". */
function documentedDefault(text: string, name: string): string {
  const m = new RegExp('`' + name + '` \\(default `?([^)`]+)`?\\)').exec(text);
  assert.ok(m, `${name} and its default are documented`);
  return m[1];
}

test('ASVS 6.1.1 anti-automation controls are documented with the configured defaults', () => {
  const text = control('Anti-automation');
  const rl = defaults.rateLimit;
  assert.equal(documentedDefault(text, 'CRITICAL_RATE_LIMIT'), String(rl.critical));
  assert.equal(documentedDefault(text, 'CRITICAL_RATE_LIMIT_DURATION'), String(rl.criticalDuration));
  assert.equal(documentedDefault(text, 'AUTH_REFRESH_RATE_LIMIT'), String(rl.refresh));
  assert.equal(documentedDefault(text, 'SECURITY_RATE_LIMIT'), String(defaults.securityRateLimit));
  assert.equal(documentedDefault(text, 'SECURITY_RATE_LIMIT_DURATION'), String(defaults.securityRateLimitDuration));
  assert.equal(documentedDefault(text, 'SECURITY_READ_RATE_LIMIT'), String(defaults.securityReadRateLimit));
  assert.ok(text.includes(`locks after ${MAX_FAILED_ATTEMPTS} wrong codes for ${LOCK_SECONDS} s`), 'TOTP lockout');
  assert.ok(text.includes(`die after ${CODE_MAX_ATTEMPTS} wrong guesses`), 'email code attempts');
  assert.match(text, /malicious lockout/);
});

test('ASVS 6.1.2 the documented context words are the ones the policy uses', () => {
  const text = control('Context-specific words');
  const listed = text.slice(text.indexOf('one of:'), text.indexOf("the account's username")).match(/`([a-z]+)`/g)!.map((w) => w.slice(1, -1));
  assert.deepEqual(listed, PRODUCT_WORDS);
  assert.ok(text.includes('`PASSWORD_CONTEXT_WORDS`'));
});

test('ASVS 6.1.3 every operation that issues a session is a documented pathway', () => {
  const text = control('Authentication pathways');
  const issuing = new Set<string>();
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = `${dir}/${e.name}`;
      if (e.isDirectory()) walk(p);
      else if (e.name.endsWith('routes.ts')) {
        for (const block of fs.readFileSync(p, 'utf8').split("implement('").slice(1)) {
          if (block.includes('sendSession(')) issuing.add(block.slice(0, block.indexOf("'")));
        }
      }
    }
  };
  walk('src/account');
  issuing.delete('A24'); // refresh renews a session, it does not authenticate
  assert.ok(issuing.size >= 6, [...issuing].join());
  for (const id of issuing) assert.match(text, new RegExp(`\\b${id}\\b`), `${id} issues a session but is not a documented pathway`);
});

test('ASVS 7.1.1 session timeouts are documented with the configured defaults', () => {
  const text = control('Session lifetimes');
  const s = defaults.sessions;
  assert.equal(documentedDefault(text, 'ACCESS_TOKEN_TTL_SECONDS'), String(s.accessTokenTtlSeconds));
  assert.equal(documentedDefault(text, 'SESSION_IDLE_TIMEOUT_SECONDS'), String(s.idleTimeoutSeconds));
  assert.equal(documentedDefault(text, 'SESSION_TTL_SECONDS'), String(s.sessionTtlSeconds));
  assert.match(text, /NIST SP 800-63B/, 'deviations from NIST are justified');
});

test('ASVS 7.1.2 the concurrent-session cap is documented with the configured defaults', () => {
  const text = control('Concurrent sessions');
  const s = defaults.sessions;
  assert.equal(documentedDefault(text, 'USER_SESSION_ACTIVE_LIMIT'), String(s.activeLimit));
  assert.equal(documentedDefault(text, 'USER_SESSION_LIMIT_POLICY'), s.limitPolicy);
  assert.equal(documentedDefault(text, 'USER_SESSION_ISSUANCE_LIMIT'), String(s.issuanceLimit));
  assert.equal(documentedDefault(text, 'USER_SESSION_ISSUANCE_WINDOW_SECONDS'), String(s.issuanceWindowSeconds));
  for (const code of ['AUTH_SESSION_LIMIT', 'AUTH_SESSION_ISSUANCE_LIMIT', 'evict_oldest']) assert.ok(text.includes(code), code);
});

test('the ASVS table names tests that exist and its counts add up', () => {
  const rows = doc.split('\n').filter((l) => /^\| [67]\.\d+\.\d+ \|/.test(l)).map((l) => l.split('|').map((c) => c.trim()));
  assert.equal(rows.length, 66, 'every V6 and V7 item of ASVS 5.0 has a row');
  const count = { applicable: 0, met: 0, notMet: 0, na: 0 };
  for (const [, id, , , status, where] of rows) {
    if (status.startsWith('n/a')) count.na++;
    else if (status.startsWith('not met')) count.notMet++;
    else if (status.startsWith('met')) count.met++;
    else assert.fail(`${id}: unknown status ${status}`);
    if (where === '—') continue;
    const m = /^(ASVS .+) \(([\w-]+)\)$/.exec(where);
    assert.ok(m, `${id}: "${where}"`);
    assert.ok(m[1].startsWith(`ASVS ${id} `), `${id}: the test is named after its item`);
    const source = fs.readFileSync(`test/security/${m[2]}.test.ts`, 'utf8');
    assert.ok(source.includes(`'${m[1]}'`) || source.includes(`'${m[1].replace(/'/g, "\\'")}'`), `${id}: no test named "${m[1]}" in ${m[2]}`);
  }
  count.applicable = count.met + count.notMet;
  assert.ok(
    doc.includes(`${rows.length} items; ${count.applicable} applicable (${count.met} met, ${count.notMet} not met); ${count.na} not applicable.`),
    JSON.stringify(count),
  );
});
