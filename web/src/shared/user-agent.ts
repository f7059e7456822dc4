// Names a browser (or HTTP client) and its operating system from a User-Agent string, for lists of sessions:
// "Chrome 126" on "Windows", "Safari 17" on "iPhone", "curl 8". Deliberately small (no dependency): the
// order of the checks matters because browsers carry each other's tokens (Edge and Opera say Chrome and
// Safari, Chrome says Safari).

export interface ParsedUserAgent {
  /** Browser or client name; null when nothing is recognised. */
  browser: string | null;
  /** Major version of the browser or client, when the string carries one. */
  version: string | null;
  /** Operating system or device; null when not recognised. */
  os: string | null;
}

/** [name, pattern with the major version in group 1]; the first match wins. */
const BROWSERS: Array<[string, RegExp]> = [
  ['Edge', /\b(?:Edg|Edge|EdgA|EdgiOS)\/(\d+)/],
  ['Opera', /\b(?:OPR|OPT|OPiOS)\/(\d+)/],
  ['Opera', /\bOpera\/.*Version\/(\d+)/],
  ['Samsung Internet', /\bSamsungBrowser\/(\d+)/],
  ['Yandex', /\bYaBrowser\/(\d+)/],
  ['UC Browser', /\bUCBrowser\/(\d+)/],
  ['WeChat', /\bMicroMessenger\/(\d+)/],
  ['Firefox', /\b(?:Firefox|FxiOS)\/(\d+)/],
  ['Chrome', /\bCriOS\/(\d+)/],
  ['Chromium', /\bChromium\/(\d+)/],
  ['Chrome', /\bHeadlessChrome\/(\d+)/],
  ['Chrome', /\bChrome\/(\d+)/],
  ['Safari', /\bVersion\/(\d+)[.\d]* (?:Mobile\/\S+ )?Safari\//],
  ['Safari', /\b(?:iPhone|iPad|Macintosh)\b.*AppleWebKit\//],
  ['Internet Explorer', /\b(?:MSIE |Trident\/.*rv:)(\d+)/],
  // HTTP clients and tools.
  ['curl', /^curl\/(\d+)/i],
  ['Wget', /^Wget\/(\d+)/i],
  ['HTTPie', /^HTTPie\/(\d+)/i],
  ['Postman', /^PostmanRuntime\/(\d+)/],
  ['Insomnia', /^insomnia\/(\d+)/],
  ['Python requests', /^python-requests\/(\d+)/],
  ['Python httpx', /^python-httpx\/(\d+)/],
  ['Python aiohttp', /\baiohttp\/(\d+)/],
  ['Python', /^Python-urllib\/(\d+)/],
  ['OpenAI SDK', /^OpenAI\/(?:Python|JS) (\d+)/],
  ['Go', /^Go-http-client\/(\d+)/],
  ['OkHttp', /^okhttp\/(\d+)/i],
  ['axios', /^axios\/(\d+)/],
  ['Node.js', /^node-fetch\/(\d+)/],
  ['Node.js', /^(?:node|undici)(?:\/(\d+))?$/],
  ['new-api', /^new-api(?:\/v?(\d+))?/i],
];

const SYSTEMS: Array<[string | ((m: RegExpMatchArray) => string), RegExp]> = [
  ['iPhone', /\biPhone\b/],
  ['iPad', /\biPad\b/],
  ['iPod', /\biPod\b/],
  [(m) => (m[1] ? `Android ${m[1]}` : 'Android'), /\bAndroid(?: (\d+))?/],
  ['HarmonyOS', /\bHarmonyOS\b|\bOpenHarmony\b/],
  ['Windows Phone', /\bWindows Phone\b/],
  ['Windows', /\bWindows\b|\bWin64\b|\bWin32\b/],
  ['ChromeOS', /\bCrOS\b/],
  ['macOS', /\bMacintosh\b|\bMac OS X\b/],
  ['Linux', /\bLinux\b|\bX11\b|\bUbuntu\b|\bFedora\b/],
  ['FreeBSD', /\bFreeBSD\b/],
];

export function parseUserAgent(ua: string | null | undefined): ParsedUserAgent {
  const s = (ua ?? '').trim();
  if (!s) return { browser: null, version: null, os: null };
  let browser: string | null = null;
  let version: string | null = null;
  for (const [name, re] of BROWSERS) {
    const m = s.match(re);
    if (m) {
      browser = name;
      version = m[1] && /^\d+$/.test(m[1]) ? m[1] : null;
      break;
    }
  }
  let os: string | null = null;
  for (const [name, re] of SYSTEMS) {
    const m = s.match(re);
    if (m) {
      os = typeof name === 'function' ? name(m) : name;
      break;
    }
  }
  return { browser, version, os };
}

/**
 * A short label: "Chrome 126 on Windows", "Safari on iPhone", "curl 8"; `on` formats the pair (for
 * translation), `unknown` is used when neither browser nor system is recognised.
 */
export function describeUserAgent(ua: string | null | undefined, words: { on: (browser: string, os: string) => string; unknown: string }): string {
  const p = parseUserAgent(ua);
  const browser = p.browser ? (p.version ? `${p.browser} ${p.version}` : p.browser) : null;
  if (browser && p.os) return words.on(browser, p.os);
  return browser ?? p.os ?? words.unknown;
}
