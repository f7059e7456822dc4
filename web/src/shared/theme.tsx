// Light and dark themes: the system's preference (prefers-color-scheme) by default, or a choice kept in
// localStorage. The colours are CSS variables in style.css; an explicit choice sets data-theme on <html>.
import { useEffect, useState } from 'preact/hooks';
import { translator, useLang } from './i18n';

export type ThemeChoice = 'system' | 'light' | 'dark';
const KEY = 'console.theme';
const listeners = new Set<() => void>();
const media = window.matchMedia('(prefers-color-scheme: dark)');

function stored(): ThemeChoice {
  try {
    const v = localStorage.getItem(KEY);
    return v === 'light' || v === 'dark' ? v : 'system';
  } catch {
    return 'system';
  }
}

let choice = stored();

function apply() {
  const root = document.documentElement;
  if (choice === 'system') delete root.dataset.theme;
  else root.dataset.theme = choice;
}
apply();
media.addEventListener('change', () => listeners.forEach((f) => f()));

export function setTheme(next: ThemeChoice) {
  choice = next;
  try {
    if (next === 'system') localStorage.removeItem(KEY);
    else localStorage.setItem(KEY, next);
  } catch {
    // private mode: the choice lasts for this page only
  }
  apply();
  for (const f of listeners) f();
}

/** The theme in effect now, after the system's preference. */
export function resolvedTheme(): 'light' | 'dark' {
  return choice === 'system' ? (media.matches ? 'dark' : 'light') : choice;
}

/** Re-renders the caller when the theme in effect changes (a choice, or the system's switch); returns it. */
export function useTheme(): 'light' | 'dark' {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return resolvedTheme();
}

/** A colour of the theme in effect, from its CSS variable (for canvas drawing: charts). */
export function themeColor(name: string): string {
  return getComputedStyle(document.documentElement).getPropertyValue(name).trim();
}

const t = translator({
  theme: { en: 'Theme', zh: '主题' },
  system: { en: 'System', zh: '跟随系统' },
  light: { en: 'Light', zh: '浅色' },
  dark: { en: 'Dark', zh: '深色' },
});

export function ThemeSwitch() {
  useLang();
  useTheme();
  return (
    <select class="theme-switch" aria-label={t('theme')} title={t('theme')} value={choice} onChange={(e) => setTheme(e.currentTarget.value as ThemeChoice)}>
      {(['system', 'light', 'dark'] as const).map((v) => (
        <option value={v}>{t(v)}</option>
      ))}
    </select>
  );
}
