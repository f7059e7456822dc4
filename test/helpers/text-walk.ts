import type { Page } from 'playwright-core';

// Finds English left in a console page shown in Chinese: the visible text nodes (outside code, pre, kbd and
// samp, where commands, keys and logs are shown as they are), the options of visible selects, placeholders,
// titles, aria-labels, button values and the document title. Names, ids, numbers, URLs and product terms are
// allowed; what is left is reported with the text it was found in.

/** Product terms, protocols and units that stay as they are in Chinese texts. */
export const PRODUCT_TERMS = [
  'API', 'URL', 'TOTP', 'OAuth', 'JSON', 'ID', 'Passkey', 'WebAuthn', 'HTTP', 'HTTPS', 'GitHub', 'Telegram', 'WeChat',
  'OIDC', 'Discord', 'LinuxDO', 'USDC', 'USD', 'CSV', 'CIDR', 'GPU', 'GPUs', 'CPU', 'SDK', 'CLI', 'SMTP', 'IP',
  'OpenAI', 'Anthropic', 'Claude', 'Gemini', 'Azure', 'AWS', 'Ollama', 'English', 'QR', 'UTC', 'TPM',
  'RPM', 'ms', 'KB', 'MB', 'GB', 'Bearer', 'SSE', 'NVIDIA', 'Docker', 'stdout', 'stderr', 'root', 'admin',
  // LLM tokens keep their name in Chinese (Token 数); edge is the name of the deployable callers come through.
  'Token', 'Tokens', 'edge',
  // HTTP methods, as codes.
  'GET', 'POST', 'PUT', 'PATCH', 'DELETE',
];

export interface WalkText {
  /** Where the text was found: text, option, placeholder, title, aria-label, value or document-title. */
  where: string;
  text: string;
}

/** Every visible text of the page (see the file's comment). */
export function visibleTexts(page: Page): Promise<WalkText[]> {
  return page.evaluate(COLLECT) as Promise<WalkText[]>;
}

// A string, so that the TypeScript loader's helpers (esbuild's __name) do not end up in the page.
const COLLECT = `(() => {
  const out = [];
  const skip = 'code, pre, kbd, samp, script, style, noscript';
  const visible = (el) => el.checkVisibility ? el.checkVisibility({ visibilityProperty: true }) : true;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = (n.textContent || '').trim();
    const parent = n.parentElement;
    if (!text || !parent || parent.closest(skip) || parent.closest('option') || !visible(parent)) continue;
    out.push({ where: 'text', text });
  }
  for (const sel of document.querySelectorAll('select')) {
    if (!visible(sel)) continue;
    for (const o of sel.options) out.push({ where: 'option', text: o.text.trim() });
  }
  for (const el of document.querySelectorAll('[placeholder], [title], [aria-label], input[type="button"], input[type="submit"]')) {
    if (el.closest(skip) || !visible(el)) continue;
    for (const attr of ['placeholder', 'title', 'aria-label']) {
      const v = (el.getAttribute(attr) || '').trim();
      if (v) out.push({ where: attr, text: v });
    }
    if (el instanceof HTMLInputElement && (el.type === 'button' || el.type === 'submit') && el.value) out.push({ where: 'value', text: el.value });
  }
  out.push({ where: 'document-title', text: document.title });
  return out;
})()`;

const PATTERNS: RegExp[] = [
  /\bhttps?:\/\/\S+/g, // URLs
  /\b[\w.+-]+@[\w-]+(\.[\w-]+)+/g, // emails
  /\b[\w.-]*\.(com|net|org|cn|ai|io|example|local)\b\S*/g, // host names
  /\b[A-Z][A-Z0-9]*(_[A-Z0-9]+)+\b/g, // catalog codes and environment variable names
  /\b[a-z][a-z0-9]*(_[a-z0-9]+)+\b/g, // snake_case field or scope names shown as values
  /\b(?=[\w-]*\d)[\w.:/-]+\b/g, // anything with a digit: ids, versions, model names like gpt-4o, times, sizes
  /\bsk-[\w-]+/g, // keys
  /\b[a-z0-9._-]+\/[a-z0-9._:/-]+/g, // image and path references (vllm/vllm-openai:latest)
  /\b[A-Z][A-Za-z]*(-[A-Z][A-Za-z]*)+\b/g, // HTTP header names (OpenAI-Organization)
];

/** The English words of one text that are not allowed: `names` are the names and models the test created. */
export function englishLeft(text: string, names: string[]): string[] {
  let rest = text;
  const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  for (const name of [...names].sort((a, b) => b.length - a.length)) rest = rest.replace(new RegExp(`(?<![\\w-])${escape(name)}(?![\\w-])`, 'g'), ' ');
  for (const p of PATTERNS) rest = rest.replace(p, ' ');
  const allowed = new Set(PRODUCT_TERMS.map((w) => w.toLowerCase()));
  return (rest.match(/[A-Za-z][A-Za-z'’]*/g) ?? []).filter((w) => w.length > 1 && !allowed.has(w.toLowerCase()));
}

/** Texts allowed whole: the language switch is named in both languages, for a reader of either. */
const ALLOWED_TEXTS = new Set(['Language / 语言']);

/** A JSON example (a placeholder of a JSON field) is code, shown as it is. */
function isJson(text: string) {
  if (!/^[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/** The texts of the page with English left in them, as `where: text [words]` lines. */
export async function englishOnPage(page: Page, names: string[]): Promise<string[]> {
  const found: string[] = [];
  for (const { where, text } of await visibleTexts(page)) {
    if (ALLOWED_TEXTS.has(text) || isJson(text)) continue;
    const words = englishLeft(text, names);
    if (words.length) found.push(`${where}: ${JSON.stringify(text)} [${words.join(' ')}]`);
  }
  return [...new Set(found)];
}

/** The page is no wider than the window: nothing scrolls sideways but the boxes meant to (tables). */
export function pageOverflow(page: Page): Promise<{ scrollWidth: number; width: number }> {
  return page.evaluate('({ scrollWidth: document.documentElement.scrollWidth, width: window.innerWidth })') as Promise<{ scrollWidth: number; width: number }>;
}
