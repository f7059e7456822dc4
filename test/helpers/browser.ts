import fs from 'node:fs';
import path from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CONSOLE_ROOT } from '../../src/kit/http/console.js';

// Headless Debian Chromium driven by playwright-core (no browser download). CI installs it (.ci/run) and
// builds the consoles (npm ci runs `prepare`); on a machine without either the browser tests are skipped.
export const CHROMIUM = '/usr/bin/chromium';
const required = process.env.CI === 'true' || process.env.TEST_REQUIRE_SERVICES === '1';
const missing = [
  !fs.existsSync(CHROMIUM) && `${CHROMIUM} is missing (CI installs it in .ci/run)`,
  !fs.existsSync(path.join(CONSOLE_ROOT, 'account', 'index.html')) && 'the console is not built (npm run build:console)',
].filter(Boolean) as string[];
if (missing.length && required) throw new Error(missing.join('; '));
export const browserSkip: string | false = missing.length ? `browser test skipped: ${missing.join('; ')}` : false;

export const OUTPUT = path.resolve('test-output', 'console');

export async function launch(): Promise<Browser> {
  const { chromium } = await import('playwright-core');
  return chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
}

/** Adds a CTAP2 platform authenticator (user verified, resident keys) to the page; returns its id. */
export async function virtualAuthenticator(context: BrowserContext, page: Page) {
  const cdp = await context.newCDPSession(page);
  await cdp.send('WebAuthn.enable');
  const { authenticatorId } = await cdp.send('WebAuthn.addVirtualAuthenticator', {
    options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true, automaticPresenceSimulation: true },
  });
  return { cdp, authenticatorId };
}

/**
 * Saves a full-page screenshot under test-output/console; with UPDATE_SCREENSHOTS=1 the ones marked for
 * the README are also written to docs/images/<name>.png.
 */
export async function screenshot(page: Page, name: string, opts: { readme?: boolean } = {}) {
  fs.mkdirSync(OUTPUT, { recursive: true });
  const file = path.join(OUTPUT, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  if (opts.readme && process.env.UPDATE_SCREENSHOTS === '1') {
    fs.mkdirSync(path.resolve('docs', 'images'), { recursive: true });
    fs.copyFileSync(file, path.resolve('docs', 'images', `${name}.png`));
  }
  return file;
}

/** A gateway console page already signed in with a staff token (the console keeps it in sessionStorage). */
export async function signedInGatewayPage(browser: Browser, url: string, token: string) {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  await page.addInitScript((t) => sessionStorage.setItem('console.staff_token', t), token);
  await page.goto(url);
  return page;
}
