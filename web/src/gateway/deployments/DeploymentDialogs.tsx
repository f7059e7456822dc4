import { useState } from 'preact/hooks';
import { Dialog, Field, FormActions, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';

type Props = { row: { id: string; deployment_name: string }; onClose: () => void; onDone: (message: string) => void };

/** G50: renames a deployment (io.net refuses a name in use: DEPLOYMENT_NAME_TAKEN). */
export function RenameDeployment({ row, onClose, onDone }: Props) {
  const [name, setName] = useState(row.deployment_name);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      await api.call('G50', { params: { id: row.id }, body: { name: name.trim() } });
      onDone(t('dep_renamed', { name: name.trim() }));
    });
  };
  return (
    <Dialog title={t('dep_rename_title', { name: row.deployment_name })} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label={t('dep_name')} required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} />
        <FormActions error={error} submit={t('save')} disabled={busy} cancel={t('cancel')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** G48: buys more hours for a deployment; the answer carries the minutes now remaining. */
export function ExtendDeployment({ row, onClose, onDone }: Props) {
  const [hours, setHours] = useState('1');
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const r = await api.call('G48', { params: { id: row.id }, body: { duration_hours: Number(hours) } });
      onDone(t('dep_extended', { name: row.deployment_name, n: r?.compute_minutes_remaining ?? '—' }));
    });
  };
  return (
    <Dialog title={t('dep_extend_title', { name: row.deployment_name })} onClose={onClose}>
      <form onSubmit={submit}>
        <Field label={t('dep_hours')} type="number" min={1} max={100000} required value={hours} onInput={(e) => setHours(e.currentTarget.value)} />
        <FormActions error={error} submit={t('dep_extend')} disabled={busy} cancel={t('cancel')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}
