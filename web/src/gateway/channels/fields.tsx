// Labelled inputs of the channel editor with a hint and an error each; the control's id is `ch-<name>` so
// an API validation message can focus the field it is about.
import type { ComponentChildren, InputHTMLAttributes, SelectHTMLAttributes, TextareaHTMLAttributes } from 'preact';

type Common = { name: string; label: string; hint?: ComponentChildren; error?: string | null };

function Wrap({ name, label, hint, error, children }: Common & { children: ComponentChildren }) {
  return (
    <div class={`field${error ? ' invalid' : ''}`}>
      <label for={`ch-${name}`}>{label}</label>
      {children}
      {hint && <small id={`ch-${name}-hint`}>{hint}</small>}
      {error && (
        <small id={`ch-${name}-error`} class="field-error">
          {error}
        </small>
      )}
    </div>
  );
}

const described = (p: Common) => [p.hint ? `ch-${p.name}-hint` : '', p.error ? `ch-${p.name}-error` : ''].filter(Boolean).join(' ') || undefined;

export function TextField(p: Common & InputHTMLAttributes<HTMLInputElement>) {
  const { name, label, hint, error, ...rest } = p;
  return (
    <Wrap name={name} label={label} hint={hint} error={error}>
      <input id={`ch-${name}`} name={name} aria-invalid={error ? 'true' : undefined} aria-describedby={described(p)} {...rest} />
    </Wrap>
  );
}

export function TextBox(p: Common & { mono?: boolean } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const { name, label, hint, error, mono, ...rest } = p;
  return (
    <Wrap name={name} label={label} hint={hint} error={error}>
      <textarea id={`ch-${name}`} name={name} class={mono ? 'mono-input' : undefined} spellcheck={mono ? false : undefined} aria-invalid={error ? 'true' : undefined} aria-describedby={described(p)} {...rest} />
    </Wrap>
  );
}

export function Choice(p: Common & { options: Array<[string, string]> } & SelectHTMLAttributes<HTMLSelectElement>) {
  const { name, label, hint, error, options, ...rest } = p;
  return (
    <Wrap name={name} label={label} hint={hint} error={error}>
      <select id={`ch-${name}`} name={name} aria-invalid={error ? 'true' : undefined} aria-describedby={described(p)} {...rest}>
        {options.map(([v, text]) => (
          <option value={v}>{text}</option>
        ))}
      </select>
    </Wrap>
  );
}

export function Check(p: { name: string; label: string; hint?: string; checked: boolean; onChange: (on: boolean) => void }) {
  return (
    <div class="field check">
      <label>
        <input type="checkbox" id={`ch-${p.name}`} name={p.name} checked={p.checked} aria-describedby={p.hint ? `ch-${p.name}-hint` : undefined} onChange={(e) => p.onChange(e.currentTarget.checked)} /> {p.label}
      </label>
      {p.hint && <small id={`ch-${p.name}-hint`}>{p.hint}</small>}
    </div>
  );
}
