import type { Page } from 'playwright-core';

// Text a reader cannot make out: the WCAG contrast ratio of each visible text's colour against the colour
// behind it (the nearest painted backgrounds, semi-transparent ones blended, down to the page's), with the
// opacity of the text's ancestors blended in. Disabled controls are exempt (WCAG 1.4.3). Form fields are
// checked with their own text colour and background.

export interface LowContrast {
  /** The element's tag and class, and its text. */
  where: string;
  ratio: number;
  color: string;
  background: string;
}

/** Every visible text of the page whose contrast ratio is below `min` (WCAG AA: 4.5 for body text, 3 for large). */
export function lowContrastTexts(page: Page, min: number): Promise<LowContrast[]> {
  return page.evaluate(`(${COLLECT})(${JSON.stringify(min)})`) as Promise<LowContrast[]>;
}

// A string, so that the TypeScript loader's helpers (esbuild's __name) do not end up in the page.
const COLLECT = `(min) => {
  const parse = (c) => {
    const m = c.match(/rgba?\\(([^)]+)\\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const over = (top, below) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + below[i] * (1 - a)).concat(1);
  };
  const lum = (c) => {
    const ch = c.slice(0, 3).map((v) => { v /= 255; return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); });
    return 0.2126 * ch[0] + 0.7152 * ch[1] + 0.0722 * ch[2];
  };
  const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
  const pageBg = () => {
    const c = parse(getComputedStyle(document.documentElement).backgroundColor);
    if (c[3] > 0) return over(c, [255, 255, 255, 1]);
    return matchMedia('(prefers-color-scheme: dark)').matches ? [18, 18, 18, 1] : [255, 255, 255, 1];
  };
  const behind = (el) => {
    const layers = [];
    for (let e = el; e && e !== document.documentElement; e = e.parentElement) {
      const c = parse(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
      // A dialog in the top layer paints over the page, not over its ancestors' backgrounds.
      if (e.tagName === 'DIALOG') break;
    }
    let bg = layers.length && layers[layers.length - 1][3] >= 1 ? [...layers.pop()] : pageBg();
    while (layers.length) bg = over(layers.pop(), bg);
    return bg;
  };
  const opacity = (el) => {
    let o = 1;
    for (let e = el; e; e = e.parentElement) o *= Number(getComputedStyle(e).opacity);
    return o;
  };
  const visible = (el) => (el.checkVisibility ? el.checkVisibility({ visibilityProperty: true, opacityProperty: true }) : true);
  const disabled = (el) => !!el.closest(':disabled, [aria-disabled="true"]');
  const seen = new Set();
  const out = [];
  const check = (el, text) => {
    if (seen.has(el) || !visible(el) || disabled(el)) return;
    seen.add(el);
    const s = getComputedStyle(el);
    const fg = parse(s.color);
    const bg = behind(el);
    const shown = over([fg[0], fg[1], fg[2], fg[3] * opacity(el)], bg);
    const r = ratio(shown, bg);
    if (r < min) out.push({ where: el.tagName.toLowerCase() + (el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\\s+/).join('.') : '') + ': ' + JSON.stringify(text.slice(0, 60)), ratio: Math.round(r * 100) / 100, color: s.color, background: 'rgb(' + bg.slice(0, 3).map(Math.round).join(', ') + ')' });
  };
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const text = (n.textContent || '').trim();
    const parent = n.parentElement;
    if (!text || !parent || parent.closest('script, style, noscript, option')) continue;
    check(parent, text);
  }
  for (const el of document.querySelectorAll('input:not([type="checkbox"]):not([type="radio"]):not([type="hidden"]), select, textarea')) {
    const text = el instanceof HTMLSelectElement ? (el.selectedOptions[0] ? el.selectedOptions[0].text : '') : el.value;
    if (text) check(el, text);
  }
  return out;
}`;
