// Two languages, switchable at any time; the choice is kept in localStorage and sent to the API as
// Accept-Language, so messages from the error catalog come back in the same language.
import { useEffect, useState } from 'preact/hooks';

export type Lang = 'en' | 'zh';
type Listener = () => void;
const listeners = new Set<Listener>();
const stored = typeof localStorage !== 'undefined' ? localStorage.getItem('console.lang') : null;
export const lang = { value: (stored === 'zh' || stored === 'en' ? stored : navigator.language.startsWith('zh') ? 'zh' : 'en') as Lang };
// From the first paint: the page's language is the one its texts are in (screen readers, fonts, hyphenation).
if (typeof document !== 'undefined') document.documentElement.lang = lang.value === 'zh' ? 'zh-CN' : 'en';

export function setLang(l: Lang) {
  lang.value = l;
  localStorage.setItem('console.lang', l);
  document.documentElement.lang = l === 'zh' ? 'zh-CN' : 'en';
  for (const f of listeners) f();
}

/** Re-renders the calling component when the language changes. */
export function useLang(): Lang {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return lang.value;
}

export type Dict = Record<string, { en: string; zh: string }>;

/** A translator over one dictionary; `{name}` placeholders are filled from vars. */
export function translator(dict: Dict) {
  return (key: string, vars: Record<string, string | number> = {}) => {
    const entry = dict[key];
    const text = entry ? entry[lang.value] : key;
    return text.replace(/\{(\w+)\}/g, (_, k) => String(vars[k] ?? ''));
  };
}
