import { useEffect, useState } from 'preact/hooks';
import { Dialog, Field, FormActions, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';

/** G29: edits every channel of a tag; empty fields leave the channels' values as they are. G32 prefills models. */
export function TagEdit({ tag, onClose, onSaved }: { tag: string; onClose: () => void; onSaved: (message: string) => void }) {
  const [f, setF] = useState({ new_tag: tag, priority: '', weight: '', models: '', groups: '' });
  const { busy, error, run } = useAction();
  const [loaded, setLoaded] = useState(false);
  useEffect(() => {
    run(async () => {
      const models = await api.call('G32', { query: { tag } });
      setF((f) => ({ ...f, models: models ?? '' }));
      setLoaded(true);
    });
  }, [tag]);
  const set = (k: keyof typeof f) => (e: any) => setF({ ...f, [k]: e.currentTarget.value });
  const num = (v: string) => (v.trim() === '' ? null : Number(v));
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const r = await api.call('G29', { body: { tag, new_tag: f.new_tag.trim() === tag ? null : f.new_tag.trim() || null, priority: num(f.priority), weight: num(f.weight), models: f.models.trim() || null, groups: f.groups.trim() || null } });
      onSaved(t('tag_saved', { tag: r?.tag ?? tag, n: r?.count ?? 0 }));
    });
  };
  return (
    <Dialog title={t('tag_edit_title', { tag })} onClose={onClose}>
      <form onSubmit={submit}>
        <fieldset class="plain" disabled={!loaded}>
          <Field label={t('new_tag')} maxLength={64} value={f.new_tag} onInput={set('new_tag')} />
          <div class="row">
            <Field label={t('priority')} type="number" placeholder={t('unchanged')} value={f.priority} onInput={set('priority')} />
            <Field label={t('weight')} type="number" min={0} placeholder={t('unchanged')} value={f.weight} onInput={set('weight')} />
          </div>
          <Field label={t('models')} value={f.models} onInput={set('models')} />
          <Field label={t('groups')} placeholder={t('unchanged')} value={f.groups} onInput={set('groups')} />
        </fieldset>
        <FormActions error={error} submit={t('save')} disabled={busy || !loaded} cancel={t('cancel')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
