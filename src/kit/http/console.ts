import fs from 'node:fs';
import path from 'node:path';
import fastifyStatic from '@fastify/static';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Logger } from 'pino';

/** Where `npm run build:console` writes the console of each deployable (web/dist/<name>). */
export const CONSOLE_ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../../../web/dist');

export interface ConsoleOptions {
  /** Folder holding index.html and assets/ of one console build. */
  dir: string;
  log: Logger;
  /** Public, non-secret settings the page reads at start (providers, feature switches). */
  settings?: () => Record<string, unknown>;
  /** Origins beyond the page's own that its scripts may call (CSP connect-src), e.g. another service's API. */
  connectOrigins?: string[];
}

// Paths of the API, the operations endpoints and the assets: never answered with the console page.
const RESERVED = /^\/(api|assets|healthz|readyz|metrics)(\/|$|\?)/;
function contentSecurityPolicy(connectOrigins: string[]) {
  return [
    "default-src 'self'",
    "img-src 'self' data:",
    "style-src 'self'",
    "script-src 'self'",
    ["connect-src 'self'", ...connectOrigins].join(' '),
    "frame-ancestors 'none'",
    "base-uri 'none'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

const escapeJson = (value: unknown) => JSON.stringify(value).replace(/</g, '\\u003c').replace(/>/g, '\\u003e').replace(/&/g, '\\u0026');

/**
 * Serves a single-page console from a static build, on the service's own origin: hashed assets under
 * /assets/, and index.html for any other GET that asks for HTML (client-side routes such as
 * /oauth/github or /user/reset), never for /api, /healthz, /readyz or /metrics. Without a build the
 * service starts anyway and logs that the console is off.
 */
export async function installConsole(app: FastifyInstance, opts: ConsoleOptions): Promise<boolean> {
  const indexFile = path.join(opts.dir, 'index.html');
  if (!fs.existsSync(indexFile)) {
    opts.log.info({ dir: opts.dir }, 'console not built (run npm run build:console): web console disabled');
    return false;
  }
  const template = fs.readFileSync(indexFile, 'utf8');
  const csp = contentSecurityPolicy(opts.connectOrigins ?? []);
  const assets = path.join(opts.dir, 'assets');
  if (fs.existsSync(assets)) {
    await app.register(fastifyStatic, {
      root: assets,
      prefix: '/assets/',
      wildcard: false,
      index: false,
      immutable: true,
      maxAge: '365d',
    });
  }
  const page = (req: FastifyRequest, reply: FastifyReply) => {
    const accept = req.headers.accept ?? '';
    if (RESERVED.test(req.url) || !accept.includes('text/html')) return reply.callNotFound();
    const settings = escapeJson(opts.settings?.() ?? {});
    // The page's language from its first paint: the browser's first language (the console then keeps the
    // reader's own choice, from localStorage, before it renders anything).
    const zh = /^\s*zh\b/i.test(String(req.headers['accept-language'] ?? ''));
    const html = template
      .replace('<!--console-settings-->', `<script type="application/json" id="console-settings">${settings}</script>`)
      .replace('<html lang="en">', `<html lang="${zh ? 'zh-CN' : 'en'}">`);
    return reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', csp)
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(html);
  };
  app.get('/', page);
  app.get('/*', page);
  opts.log.info({ dir: opts.dir }, 'web console served at /');
  return true;
}
