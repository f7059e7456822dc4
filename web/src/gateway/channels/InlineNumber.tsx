import { useEffect, useState } from 'preact/hooks';
import { api } from '../session';
import { t } from '../texts';
import { explain } from './format';
import { useChannels } from './context';

/**
 * Priority or weight edited in its cell: saved through G03 on Enter or when the field is left, the API's
 * validation message shown under it (the typed value stays for a fix); Escape puts the stored value back.
 */
export function InlineNumber({ c, field }: { c: any; field: 'priority' | 'weight' }) {
  const { patch } = useChannels();
  const stored = String(c[field] ?? 0);
  const [value, setValue] = useState(stored);
  const [state, setState] = useState<'idle' | 'saving' | 'saved'>('idle');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => setValue(stored), [stored]);
  useEffect(() => {
    if (state !== 'saved') return;
    const timer = setTimeout(() => setState('idle'), 2000);
    return () => clearTimeout(timer);
  }, [state]);
  const save = async () => {
    const v = value.trim();
    if (state === 'saving' || (v === stored && !error)) return;
    if (v === '') return setValue(stored);
    setState('saving');
    setError(null);
    try {
      await api.call('G03', { body: { id: c.id, [field]: Number(v) } });
      patch(c.id, { [field]: Number(v) });
      setState('saved');
    } catch (e) {
      setError(explain(e).message);
      setState('idle');
    }
  };
  const id = `inline-${field}-${c.id}`;
  return (
    <div class="inline-edit">
      <input
        id={id}
        class="inline-num"
        type="number"
        step={1}
        inputMode="numeric"
        value={value}
        aria-label={t(field === 'priority' ? 'priority_of' : 'weight_of', { name: c.name })}
        aria-invalid={error ? 'true' : undefined}
        aria-describedby={error ? `${id}-error` : undefined}
        aria-busy={state === 'saving'}
        onInput={(e) => setValue(e.currentTarget.value)}
        onBlur={save}
        onKeyDown={(e) => {
          if (e.key === 'Enter') {
            e.preventDefault();
            void save();
          }
          if (e.key === 'Escape') {
            setValue(stored);
            setError(null);
          }
        }}
      />
      {state === 'saved' && (
        <span class="saved-mark" role="status">
          {t('inline_saved')}
        </span>
      )}
      {error && (
        <small id={`${id}-error`} class="field-error" role="alert">
          {error}
        </small>
      )}
    </div>
  );
}
