import assert from 'node:assert/strict';
import fs from 'node:fs';
import { test } from 'node:test';
import { Browser } from '../../helpers/http.js';
import { LEGACY, newApiDatabase } from '../new-api-fixture.js';
import { balanceOf, CALL_COST, eventually, MODELS, tokenOf, type Customer, type Product } from '../stack.js';

/**
 * Moving a paying customer from new-api: `import new-api` brings the user, the wallet, the token (whose `sk-…` key
 * keeps working), the unused code and recent logs; the old key is then charged from the imported balance.
 */
export function importCases(product: () => Product) {
  let legacy: Customer;
  let fixture: ReturnType<typeof newApiDatabase>;

  test('import new-api brings a customer\'s balance, usage counters, token and codes; they sign in with their new-api password', async () => {
    const p = product();
    fixture = newApiDatabase();
    p.secrets.add(fixture.key);
    p.secrets.add(fixture.key.slice(3));
    p.secrets.add(fixture.code);
    p.secrets.add(LEGACY.password);
    try {
      if (p.mode === 'co-hosted') {
        await p.cli('account', ['import', 'new-api', '--from', fixture.file, '--logs-days', '30']);
      } else {
        // The account and the edge on different machines: the account part first, then the edge part, which
        // reads the account database's import map.
        await p.cli('account', ['import', 'new-api', '--from', fixture.file, '--only', 'account']);
        await p.cli('gateway', ['import', 'new-api', '--from', fixture.file, '--only', 'edge', '--logs-days', '30'], {
          ACCOUNT_DATABASE_URL: `sqlite://${p.envOf.account.DATA_DIR}/account.sqlite`,
        });
      }
    } finally {
      fs.rmSync(fixture.dir, { recursive: true, force: true });
    }
    const web = new Browser(p.accountUrl);
    const login = await web.login(LEGACY.username, LEGACY.password);
    assert.equal(login.json?.success, true, login.text);
    p.secrets.add(web.accessToken!);
    const self = await web.get('/api/user/self');
    legacy = { id: self.json.data.id, username: LEGACY.username, password: LEGACY.password, web };
    assert.deepEqual(await balanceOf(legacy), { quota: LEGACY.quota, used_quota: LEGACY.used_quota, request_count: LEGACY.request_count });

    const tokens = await web.get('/api/token/');
    assert.equal(tokens.json?.success, true, tokens.text);
    assert.equal(tokens.json.data.total, 1);
    const t = tokens.json.data.items[0];
    assert.equal(t.name, LEGACY.tokenName);
    assert.equal(t.remain_quota, LEGACY.remain_quota);
    assert.equal(t.used_quota, LEGACY.token_used);
    assert.equal(t.unlimited_quota, false);
    assert.equal(t.status, 1);
    assert.ok(t.key.startsWith(fixture.key.slice(0, 4)) && t.key.endsWith(fixture.key.slice(-4)) && t.key.includes('*'), `masked: ${t.key}`);
    const reveal = await web.post(`/api/token/${t.id}/key`);
    assert.equal(reveal.json.code, 'TOKEN_KEY_ALREADY_SHOWN', 'an imported key is never shown again');
    assert.ok(!reveal.text.includes(fixture.key.slice(3)));
  });

  test('the imported sk- key calls /v1/chat/completions unchanged and is charged from the imported balance', async () => {
    const p = product();
    const [t] = (await legacy.web.get('/api/token/')).json.data.items;
    const r = await p.chat(fixture.key);
    assert.equal(r.status, 200, r.text);
    const after = await eventually(() => balanceOf(legacy), (b) => b.request_count === LEGACY.request_count + 1, 'settled');
    assert.deepEqual(after, { quota: LEGACY.quota - CALL_COST, used_quota: LEGACY.used_quota + CALL_COST, request_count: LEGACY.request_count + 1 });
    const token = await tokenOf(legacy, t.id);
    assert.equal(token.remain_quota, LEGACY.remain_quota - CALL_COST);
    assert.equal(token.used_quota, LEGACY.token_used + CALL_COST);

    const logs = await legacy.web.get('/api/log/self?type=2');
    assert.equal(logs.json?.success, true, logs.text);
    assert.equal(logs.json.data.total, 2, 'the imported consume row and the new call');
    const [now, imported] = logs.json.data.items;
    assert.equal(now.quota, CALL_COST);
    assert.equal(imported.quota, LEGACY.logQuota);
    assert.equal(imported.model_name, MODELS.chat);
    assert.equal(imported.token_name, LEGACY.tokenName);
    assert.equal(imported.prompt_tokens, 200);
    assert.equal(imported.completion_tokens, 40);
  });

  test('the imported unused code credits once', async () => {
    const before = await balanceOf(legacy);
    const r = await legacy.web.post('/api/user/topup', { key: fixture.code });
    assert.equal(r.json?.success, true, r.text);
    assert.equal(r.json.data, LEGACY.codeQuota);
    assert.equal((await balanceOf(legacy)).quota, before.quota + LEGACY.codeQuota);
    assert.equal((await legacy.web.post('/api/user/topup', { key: fixture.code })).json.code, 'TOPUP_CODE_INVALID');
  });
}
