import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { after, before, test } from 'node:test';
import { gatewayCli } from '../helpers/gateway-cli.js';
import { eachDatabase } from '../helpers/services.js';
import { startGateway, type GatewayServer } from '../helpers/gateway.js';

function cli(s: GatewayServer, ...args: string[]) {
  return gatewayCli(s, {}, ...args);
}

async function ok(s: GatewayServer, ...args: string[]) {
  const r = await cli(s, ...args);
  assert.equal(r.error, null, args.join(' '));
  return r.lines;
}

async function fails(s: GatewayServer, pattern: RegExp, ...args: string[]) {
  const r = await cli(s, ...args);
  assert.match(r.error ?? `succeeded: ${r.lines.join('\n')}`, pattern, args.join(' '));
}

const status = async (s: GatewayServer, token: string) => (await s.client(token).get('/api/channel/')).status;

eachDatabase('gateway CLI: token list/revoke, staff disable/enable, root grants, audit arguments', (v) => {
  let s: GatewayServer;
  before(async () => {
    s = await startGateway(v);
  });
  after(() => s.close());

  test('token list shows live tokens without secrets; revoke --id and --staff end them on the next request', async () => {
    await s.services.staff.create('ops', 'admin');
    await s.services.staff.create('feeder', 'service', ['authz.ChannelRead']);
    const a = (await s.services.staff.issueToken('ops')).token;
    const b = (await s.services.staff.issueToken('ops', 600)).token;
    const c = (await s.services.staff.issueToken('ops')).token;
    const gone = (await s.services.staff.issueToken('ops')).token;
    await s.services.staff.revokeToken(gone);
    const svc = (await s.services.staff.issueToken('feeder')).token;

    const lines = await ok(s, 'token', 'list', '--staff', 'ops');
    assert.equal(lines.length, 3, lines.join('\n'));
    const hashes = await s.ctx.db.selectFrom('staff_tokens').select('token_hash').execute();
    for (const secret of [a, b, c, gone, ...hashes.map((h) => h.token_hash)]) assert.ok(!lines.join('\n').includes(secret));
    assert.match(lines[0]!, /^\d+\t\d{4}-\d\d-\d\dT[\d:.]+Z\tnever$/);
    assert.ok(Date.parse(lines[1]!.split('\t')[2]!) > Date.now(), 'the expiring token shows its expiry');
    const idA = lines[0]!.split('\t')[0]!;
    assert.equal((await ok(s, 'token', 'list', '--staff', 'feeder')).length, 1);

    assert.deepEqual(await ok(s, 'token', 'revoke', '--id', idA), ['token revoked']);
    assert.equal(await status(s, a), 401);
    assert.equal(await status(s, b), 200);
    await fails(s, /no active token matches/, 'token', 'revoke', '--id', idA);
    await fails(s, /--id must be a positive integer/, 'token', 'revoke', '--id', 'x');
    await fails(s, /exactly one of/, 'token', 'revoke', '--id', idA, '--staff', 'ops');

    assert.deepEqual(await ok(s, 'token', 'revoke', '--staff', 'ops'), ['revoked 2 tokens of ops']);
    assert.equal(await status(s, b), 401);
    assert.equal(await status(s, c), 401);
    assert.deepEqual(await ok(s, 'token', 'list', '--staff', 'ops'), []);
    assert.equal(await status(s, svc), 200, 'other identities keep their tokens');
    assert.deepEqual(await ok(s, 'token', 'revoke', '--staff', 'feeder'), ['revoked 1 token of feeder']);
    assert.equal(await status(s, svc), 401);
    await fails(s, /no staff or service identity named nobody/, 'token', 'list', '--staff', 'nobody');
  });

  test('staff disable stops the tokens of staff and service identities; no new tokens or TOTP until enable', async () => {
    await s.services.staff.create('lead', 'root');
    await s.services.staff.create('bot', 'service', ['authz.ChannelRead']);
    const lead = (await s.services.staff.issueToken('lead')).token;
    const bot = (await s.services.staff.issueToken('bot')).token;
    assert.equal(await status(s, lead), 200);

    assert.deepEqual(await ok(s, 'staff', 'disable', '--name', 'lead'), ['lead disabled']);
    await ok(s, 'staff', 'disable', '--name', 'bot');
    const r = await s.client(lead).get('/api/channel/');
    assert.equal(r.status, 401);
    assert.equal(r.json.code, 'GW_UNAUTHORIZED');
    assert.equal(await status(s, bot), 401);
    await fails(s, /lead is disabled/, 'token', 'create', '--staff', 'lead');
    await fails(s, /lead is disabled/, 'staff', 'totp', '--name', 'lead');
    assert.ok((await ok(s, 'staff', 'list')).some((l) => /\tlead\tstaff\troot\tdisabled$/.test(l)));

    assert.deepEqual(await ok(s, 'staff', 'enable', '--name', 'lead'), ['lead enabled']);
    assert.equal(await status(s, lead), 200, 'enable restores the unrevoked tokens');
    assert.equal(await status(s, bot), 401, 'bot is still disabled');
    assert.match((await ok(s, 'token', 'create', '--staff', 'lead')).at(-1)!, /^gwst_/);
    await fails(s, /no staff or service identity named ghost/, 'staff', 'disable', '--name', 'ghost');
  });

  test('grant and deny on a root identity are refused; token revoke reads --token - from standard input', async () => {
    await s.services.staff.create('chief', 'root');
    // Once through a real CLI process: the exit status and stderr are the contract tooling reads.
    const env = { ...process.env, DATA_DIR: s.dataDir, GATEWAY_DATABASE_URL: s.ctx.config.gateway.databaseUrl, LOG_LEVEL: 'warn' };
    const deny = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'staff', 'deny', '--name', 'chief', '--permission', 'authz.ChannelRead'], { env, encoding: 'utf8' });
    assert.equal(deny.status, 1, deny.stdout);
    assert.match(deny.stderr, /^error: chief is root and holds every permission/m);
    await fails(s, /chief is root and holds every permission/, 'staff', 'grant', '--name', 'chief', '--permission', 'authz.ChannelRead');
    // A token given as `--token -` is read from standard input, never from argv.
    const token = (await s.services.staff.issueToken('chief')).token;
    const revoke = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli.ts', 'token', 'revoke', '--token', '-'], { env, encoding: 'utf8', input: `${token}\n` });
    assert.equal(revoke.status, 0, revoke.stderr);
    assert.equal(revoke.stdout.trim(), 'token revoked');
    assert.equal(await status(s, token), 401);
    const id = (await s.services.staff.byName('chief')).id;
    assert.equal((await s.ctx.db.selectFrom('staff_permissions').selectAll().where('staff_id', '=', id).execute()).length, 0);
  });

  test('audit takes --limit and --channel as positive integers only', async () => {
    const root = await s.staff('auditor', 'root');
    const ids: number[] = [];
    for (let i = 0; i < 3; i++) ids.push((await root.post('/api/channel/', { mode: 'single', channel: { name: `a${i}`, key: `k${i}`, models: 'm' } })).json.data.ids[0]);
    for (const bad of ['-1', '0', '1.5', 'abc', '1e3', '']) await fails(s, /--limit must be a positive integer/, 'audit', '--limit', bad);
    for (const bad of ['abc', '0', '-2', '2.5']) await fails(s, /--channel must be a positive integer/, 'audit', '--channel', bad);
    assert.equal((await ok(s, 'audit', '--limit', '2')).length, 2);
    const everything = (await ok(s, 'audit', '--limit', '99999')).map((l) => JSON.parse(l));
    assert.equal(everything.filter((r) => r.operation === 'G02').length, 3);
    const one = (await ok(s, 'audit', '--channel', String(ids[1]))).map((l) => JSON.parse(l));
    assert.deepEqual(one.map((r) => [r.operation, Number(r.channel_id)]), [['G02', ids[1]]]);
  });

  test('CLI actions on identities are audited under the operating-system user, without any secret', async () => {
    await ok(s, 'staff', 'create', '--name', 'temp', '--role', 'admin');
    await ok(s, 'staff', 'grant', '--name', 'temp', '--permission', 'authz.ChannelSensitiveWrite');
    const [token] = (await ok(s, 'token', 'create', '--staff', 'temp')).slice(-1);
    const [totp] = (await ok(s, 'staff', 'totp', '--name', 'temp')).slice(-1);
    await ok(s, 'staff', 'disable', '--name', 'temp');
    await ok(s, 'token', 'revoke', '--token', token!);
    await ok(s, 'token', 'revoke', '--staff', 'temp');
    const [svc] = (await ok(s, 'service', 'create', '--name', 'temp-svc', '--permission', 'authz.ChannelRead')).slice(-1);
    const rows = (await ok(s, 'audit', '--limit', '10')).map((l) => JSON.parse(l)).reverse();
    const mine = rows.filter((r) => r.detail.name === 'temp' || r.detail.name === 'temp-svc' || r.detail.by === 'token');
    assert.deepEqual(mine.map((r) => r.operation), ['cli:staff', 'cli:grant', 'cli:token', 'cli:totp', 'cli:disable', 'cli:revoke', 'cli:revoke', 'cli:service']);
    for (const r of mine) {
      assert.match(r.actor_name, /^cli:/);
      assert.equal(Number(r.actor_id), 0);
    }
    const text = JSON.stringify(rows);
    for (const secret of [token!, totp!, svc!]) assert.ok(!text.includes(secret), 'a secret reached the audit log');
  });
});
