// Form pieces of the settings pages: a checkbox and a text area, each with a hint tied to it.
import type { TextareaHTMLAttributes } from 'preact';
import { useId } from 'preact/hooks';

export function Check(p: { label: string; hint?: string; name?: string; checked: boolean; onChange: (on: boolean) => void }) {
  const id = useId();
  return (
    <div class="field check">
      <label>
        <input type="checkbox" name={p.name} checked={p.checked} aria-describedby={p.hint ? `${id}-hint` : undefined} onChange={(e) => p.onChange(e.currentTarget.checked)} /> {p.label}
      </label>
      {p.hint && <small id={`${id}-hint`}>{p.hint}</small>}
    </div>
  );
}

export function Lines(props: { label: string; hint?: string } & TextareaHTMLAttributes<HTMLTextAreaElement>) {
  const id = useId();
  const { label, hint, ...rest } = props;
  return (
    <div class="field">
      <label for={id}>{label}</label>
      <textarea id={id} rows={2} spellcheck={false} class="mono-input" aria-describedby={hint ? `${id}-hint` : undefined} {...rest} />
      {hint && <small id={`${id}-hint`}>{hint}</small>}
    </div>
  );
}
