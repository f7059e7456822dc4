// Only commander and types are imported up front: an action imports what it uses (`cli --help` stays fast).
import fs from 'node:fs';
import path from 'node:path';
import type { Command } from 'commander';

function providersFile(o: { file?: string }): string {
  const file = o.file || process.env.OAUTH_CUSTOM_PROVIDERS_FILE;
  if (!file) throw new Error('name the file with --file or OAUTH_CUSTOM_PROVIDERS_FILE');
  return path.resolve(file);
}

function readList(file: string): Record<string, unknown>[] {
  if (!fs.existsSync(file)) return [];
  const list = JSON.parse(fs.readFileSync(file, 'utf8')) as unknown;
  if (!Array.isArray(list)) throw new Error(`${file} must hold a JSON array`);
  return list as Record<string, unknown>[];
}

/** Validates the list with the same rules as start-up, then replaces the file atomically (mode 0600: it holds client secrets). */
async function writeList(file: string, list: Record<string, unknown>[]) {
  const { loadMailOAuthConfig } = await import('../../config/mail-oauth.js');
  const tmp = `${file}.${process.pid}.tmp`;
  fs.mkdirSync(path.dirname(file), { recursive: true });
  fs.writeFileSync(tmp, JSON.stringify(list, null, 2) + '\n', { mode: 0o600 });
  try {
    loadMailOAuthConfig({ OAUTH_CUSTOM_PROVIDERS_FILE: tmp });
  } catch (e) {
    fs.rmSync(tmp, { force: true });
    throw e;
  }
  fs.renameSync(tmp, file);
}

/** `oauth …` commands: list login providers, and manage operator-defined providers in their JSON file. */
export function registerOAuthCommands(program: Command) {
  const oauth = program.command('oauth').description('login providers (OAuth 2.0 / OpenID Connect)');

  oauth
    .command('providers')
    .description('list every login provider, whether it is enabled, and the callback URL to register with it')
    .action(async () => {
      const { loadConfig } = await import('../../config/index.js');
      const { createProviders } = await import('./providers.js');
      const cfg = loadConfig({ LOG_LEVEL: 'warn', ...process.env }).mailOAuth;
      const base = cfg.serverAddress || '<SERVER_ADDRESS>';
      for (const p of createProviders(cfg.oauth).values()) {
        console.log([p.slug, p.name, p.enabled ? 'enabled' : 'disabled', `${base}/oauth/${p.slug}`, p.pkce ? 'pkce' : 'no-pkce'].join('\t'));
      }
    });

  oauth
    .command('add-provider')
    .description('add or replace an operator-defined provider (restart the account service to apply)')
    .option('--file <path>', 'providers JSON file (default: OAUTH_CUSTOM_PROVIDERS_FILE)')
    .requiredOption('--slug <slug>', 'the provider in URLs (/oauth/<slug>)')
    .option('--name <name>', 'the name on the login button (default: the slug)')
    .option('--icon <url>', 'icon URL for the login button')
    .requiredOption('--client-id <id>', 'OAuth client id')
    .requiredOption('--client-secret <secret>', 'OAuth client secret')
    .requiredOption('--authorization-endpoint <url>', "the provider's authorization URL")
    .requiredOption('--token-endpoint <url>', "the provider's token URL")
    .requiredOption('--userinfo-endpoint <url>', "the provider's user-info URL")
    .option('--scope <scope>', 'scopes to ask for, space-separated')
    .option('--user-id-field <field>', 'user-info field holding the stable id', 'id')
    .option('--username-field <field>', 'user-info field holding the login name', 'username')
    .option('--no-pkce', 'the provider does not support PKCE')
    .action(async (o) => {
      const file = providersFile(o);
      const entry: Record<string, unknown> = {
        slug: o.slug,
        name: o.name ?? o.slug,
        icon: o.icon ?? '',
        client_id: o.clientId,
        client_secret: o.clientSecret,
        authorization_endpoint: o.authorizationEndpoint,
        token_endpoint: o.tokenEndpoint,
        userinfo_endpoint: o.userinfoEndpoint,
        scope: o.scope ?? '',
        user_id_field: o.userIdField,
        username_field: o.usernameField,
        pkce: o.pkce !== false,
      };
      const list = readList(file).filter((p) => p.slug !== o.slug);
      await writeList(file, [...list, entry]);
      console.log(`saved provider ${o.slug} in ${file}; restart the account service to apply`);
    });

  oauth
    .command('remove-provider')
    .description('remove an operator-defined provider (existing bindings stay until unbound)')
    .option('--file <path>', 'providers JSON file (default: OAUTH_CUSTOM_PROVIDERS_FILE)')
    .requiredOption('--slug <slug>', 'the provider to remove')
    .action(async (o) => {
      const file = providersFile(o);
      const list = readList(file);
      const rest = list.filter((p) => p.slug !== o.slug);
      if (rest.length === list.length) throw new Error(`no provider "${o.slug}" in ${file}`);
      await writeList(file, rest);
      console.log(`removed provider ${o.slug} from ${file}; restart the account service to apply`);
    });
}
