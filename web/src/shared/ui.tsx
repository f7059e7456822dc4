// Accessible building blocks shared by both consoles: labelled fields, an alert box for catalog errors,
// a modal dialog, a language switch and a minimal history router.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';
import { useEffect, useId, useRef, useState } from 'preact/hooks';
import { ApiError } from './api';
import { lang, setLang, useLang } from './i18n';

export function Field(props: { label: string; hint?: ComponentChildren } & InputHTMLAttributes<HTMLInputElement>) {
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

/**
 * A translated sentence with commands kept as they are in any language: translate it with each command's
 * placeholder filled by `CODE` (t('hint', { command: CODE })), and each CODE becomes the next of `codes`, in a
 * code element.
 */
export const CODE = '\u0000';
export function CodeText({ text, codes }: { text: string; codes: string[] }) {
  const parts = text.split(CODE);
  return (
    <>
      {parts.map((part, i) => (
        <>
          {part}
          {i < parts.length - 1 && <code>{codes[i]}</code>}
        </>
      ))}
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

export function Dialog(props: { title: string; onClose: () => void; children: ComponentChildren; wide?: boolean; role?: 'alertdialog' }) {
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
    <dialog ref={ref} role={props.role} aria-labelledby={titleId} class={props.wide ? 'wide' : undefined}>
      <h2 id={titleId}>{props.title}</h2>
      {props.children}
    </dialog>
  );
}

export interface ConfirmOptions {
  title: string;
  /** What the action does, in a sentence or two. */
  message: ComponentChildren;
  confirm: string;
  cancel: string;
  /** A destructive action: the confirm button is red and Cancel has the focus. */
  danger?: boolean;
}

/**
 * Confirmations in the console's own dialog (an alertdialog, not window.confirm): `ask` resolves true when the
 * operator confirms, false on Cancel or Escape; render `dialog` somewhere in the page.
 */
export function useConfirm() {
  const [pending, setPending] = useState<(ConfirmOptions & { resolve: (ok: boolean) => void }) | null>(null);
  const ask = (o: ConfirmOptions) => new Promise<boolean>((resolve) => setPending({ ...o, resolve }));
  const close = (ok: boolean) => {
    pending?.resolve(ok);
    setPending(null);
  };
  const dialog = pending && (
    <Dialog title={pending.title} role="alertdialog" onClose={() => close(false)}>
      <div class="confirm-message">{pending.message}</div>
      <div class="row">
        <button type="button" class={pending.danger ? 'danger' : undefined} onClick={() => close(true)}>
          {pending.confirm}
        </button>
        <button type="button" class="secondary" autoFocus={pending.danger} onClick={() => close(false)}>
          {pending.cancel}
        </button>
      </div>
    </Dialog>
  );
  return { ask, dialog };
}

/** Copies `text` to the clipboard (a hidden text area where the Clipboard API is missing, as on plain http). */
export async function copyText(text: string): Promise<boolean> {
  try {
    if (navigator.clipboard && window.isSecureContext) {
      await navigator.clipboard.writeText(text);
      return true;
    }
  } catch {
    // fall back below
  }
  const area = document.createElement('textarea');
  area.value = text;
  area.setAttribute('readonly', '');
  area.style.position = 'fixed';
  area.style.opacity = '0';
  (document.querySelector('dialog[open]') ?? document.body).appendChild(area);
  area.select();
  let ok = false;
  try {
    ok = document.execCommand('copy');
  } catch {
    ok = false;
  }
  area.remove();
  return ok;
}

/** A button that copies `text`; its label turns into `copied` for a moment, and a failure says so. */
export function CopyButton(props: { text: string; label: string; copied: string; failed: string; class?: string }) {
  const [state, setState] = useState<'idle' | 'copied' | 'failed'>('idle');
  useEffect(() => {
    if (state === 'idle') return;
    const timer = setTimeout(() => setState('idle'), 2500);
    return () => clearTimeout(timer);
  }, [state]);
  return (
    <button type="button" class={props.class ?? 'secondary'} onClick={async () => setState((await copyText(props.text)) ? 'copied' : 'failed')}>
      <span aria-live="polite">{state === 'copied' ? props.copied : state === 'failed' ? props.failed : props.label}</span>
    </button>
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
