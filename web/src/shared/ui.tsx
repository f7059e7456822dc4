// Accessible building blocks shared by both consoles: labelled fields, an alert box for catalog errors,
// a modal dialog, a language switch and a minimal history router.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import { lang, setLang, useLang } from './i18n';

export function Field(props: { label: string; hint?: string } & InputHTMLAttributes<HTMLInputElement>) {
  const id = useId();
  const { label, hint, ...input } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <input id={id} aria-describedby={hint ? `${id}-hint` : undefined} {...input} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}

export function Area(props: { label: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  const { label, ...rest } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} {...rest} />
    </div>
  );
}

export function Select(props: { label: string; options: Array<[string, string]> } & SelectHTMLAttributes<HTMLSelectElement>) {
  const id = useId();
  const { label, options, ...rest } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <select id={id} {...rest}>
        {options.map(([v, text]) => (
          <option value={v}>{text}</option>
        ))}
      </select>
    </div>
  );
}

/** The catalog message (already in the chosen language) and its stable code. */
export function ErrorBox({ error }: { error: unknown }) {
  if (!error) return null;
  const e = error instanceof ApiError ? error : null;
  return (
    <div class="alert" role="alert">
      {e ? e.message : String((error as Error)?.message ?? error)}
      {e && e.code !== 'HTTP_ERROR' && <code class="code">{e.code}</code>}
    </div>
  );
}

/** The end of a dialog form: its error, then the submit button, any extra buttons, and cancel. */
export function FormActions(props: { error: unknown; submit: string; disabled?: boolean; cancel: string; onCancel: () => void; children?: ComponentChildren }) {
  return (
    <>
      <ErrorBox error={props.error} />
      <div class="row">
        <button type="submit" disabled={props.disabled}>
          {props.submit}
        </button>
        {props.children}
        <button type="button" class="secondary" onClick={props.onCancel}>
          {props.cancel}
        </button>
      </div>
    </>
  );
}

export function Notice({ children }: { children: ComponentChildren }) {
  return (
    <div class="notice" role="status">
      {children}
    </div>
  );
}

/** Runs an async action with a busy flag and keeps its error for an ErrorBox. */
export function useAction() {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(null);
  async function run<T>(f: () => Promise<T>): Promise<T | undefined> {
    setBusy(true);
    setError(null);
    try {
      return await f();
    } catch (e) {
      setError(e);
      return undefined;
    } finally {
      setBusy(false);
    }
  }
  return { busy, error, setError, run };
}

export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean }) {
  const ref = useRef<HTMLDialogElement>(null);
  const titleId = useId();
  useEffect(() => {
    const d = ref.current!;
    if (!d.open) d.showModal();
    const cancel = (e: Event) => {
      e.preventDefault();
      props.onClose();
    };
    d.addEventListener('cancel', cancel);
    return () => d.removeEventListener('cancel', cancel);
  }, []);
  return (
    <dialog ref={ref} aria-labelledby={titleId} class={props.wide ? 'wide' : undefined}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

export function LangSwitch() {
  const current = useLang();
  return (
    <div class="lang" role="group" aria-label="Language / 语言">
      <button type="button" aria-pressed={current === 'en'} onClick={() => setLang('en')}>
        English
      </button>
      <button type="button" aria-pressed={current === 'zh'} onClick={() => setLang('zh')}>
        中文
      </button>
    </div>
  );
}

const routeListeners = new Set<() => void>();
export function navigate(to: string) {
  history.pushState(null, '', to);
  for (const f of routeListeners) f();
}
window.addEventListener('popstate', () => routeListeners.forEach((f) => f()));

/** The current path; re-renders on navigate() and back/forward. */
export function useRoute(): { path: string; query: URLSearchParams } {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    routeListeners.add(f);
    return () => void routeListeners.delete(f);
  }, []);
  return { path: location.pathname, query: new URLSearchParams(location.search) };
}

export function Link(props: { to: string; children: ComponentChildren }) {
  return (
    <a
      href={props.to}
      onClick={(e) => {
        e.preventDefault();
        navigate(props.to);
      }}
    >
      {props.children}
    </a>
  );
}

/** Settings the server embeds in the page (no secrets). */
export function pageSettings<T>(): Partial<T> {
  const el = document.getElementById('console-settings');
  try {
    return el ? JSON.parse(el.textContent || '{}') : {};
  } catch {
    return {};
  }
}

export function formatTime(seconds: number | null | undefined) {
  if (!seconds) return '—';
  return new Date(seconds * 1000).toLocaleString(lang.value === 'zh' ? 'zh-CN' : 'en');
}
