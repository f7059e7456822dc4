import { useEffect, useState } from 'preact/hooks';
import { Dialog, Field, FormActions, Select, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';

const EMPTY = { name: '', hardware_id: '', location_id: '', gpus: '1', replicas: '1', hours: '1', image_url: '', port: '' };

/**
 * G42: a new deployment from the provider's hardware (G53) and locations (G54); the name is checked first
 * (G52) and the price can be estimated (G55) before it is created.
 */
export function CreateDeployment({ onClose, onDone }: { onClose: () => void; onDone: (message: string) => void }) {
  const [f, setF] = useState(EMPTY);
  const [catalog, setCatalog] = useState<{ hardware: any[]; locations: any[] } | null>(null);
  const [price, setPrice] = useState<any>(null);
  const { busy, error, setError, run } = useAction();
  useEffect(() => {
    run(async () => {
      const [hw, loc] = await Promise.all([api.call('G53'), api.call('G54')]);
      setCatalog({ hardware: hw.hardware_types, locations: loc.locations });
      setF((f) => ({ ...f, hardware_id: String(hw.hardware_types[0]?.id ?? ''), location_id: String(loc.locations[0]?.id ?? '') }));
    });
  }, []);
  const set = (k: keyof typeof EMPTY) => (e: any) => setF({ ...f, [k]: e.currentTarget.value });
  const shape = () => ({ hardware_id: Number(f.hardware_id), location_ids: [Number(f.location_id)], gpus_per_container: Number(f.gpus), replica_count: Number(f.replicas), duration_hours: Number(f.hours) });
  const estimate = () => run(async () => setPrice(await api.call('G55', { body: shape() })));
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const name = f.name.trim();
      if (!(await api.call('G52', { query: { name } })).available) return setError(new Error(t('dep_name_taken', { name })));
      const { replica_count, ...s } = shape();
      const port = f.port.trim() ? { traffic_port: Number(f.port) } : {};
      const r = await api.call('G42', { body: { resource_private_name: name, ...s, container_config: { replica_count, ...port }, registry_config: { image_url: f.image_url.trim() } } });
      onDone(t('dep_created', { name, id: r.deployment_id }));
    });
  };
  const hardware = (catalog?.hardware ?? []).map((h) => [String(h.id), `${h.brand_name} ${h.name} · ${t('dep_available', { n: h.available_count })}`] as [string, string]);
  const locations = (catalog?.locations ?? []).map((l) => [String(l.id), `${l.name} (${l.iso2}) · ${t('dep_available', { n: l.available })}`] as [string, string]);
  return (
    <Dialog title={t('dep_new')} onClose={onClose}>
      <form onSubmit={submit}>
        <fieldset class="plain" disabled={!catalog}>
          <Field label={t('dep_name')} required maxLength={128} value={f.name} onInput={set('name')} />
          <Field label={t('dep_image')} required placeholder="vllm/vllm-openai:latest" value={f.image_url} onInput={set('image_url')} />
          <div class="row">
            <Select label={t('dep_hardware')} value={f.hardware_id} onChange={set('hardware_id')} options={hardware} />
            <Select label={t('dep_location')} value={f.location_id} onChange={set('location_id')} options={locations} />
          </div>
          <div class="row">
            <Field label={t('dep_gpus')} type="number" min={1} required value={f.gpus} onInput={set('gpus')} />
            <Field label={t('dep_replicas')} type="number" min={1} required value={f.replicas} onInput={set('replicas')} />
            <Field label={t('dep_hours')} type="number" min={1} required value={f.hours} onInput={set('hours')} />
            <Field label={t('dep_port')} type="number" min={1} max={65535} value={f.port} onInput={set('port')} />
          </div>
        </fieldset>
        {price && <p role="status">{t('dep_price', { cost: price.estimated_cost, currency: price.currency })}</p>}
        <FormActions error={error} submit={t('dep_create')} disabled={busy || !catalog} cancel={t('cancel')} onCancel={onClose}>
          <button type="button" class="secondary" disabled={busy || !catalog} onClick={estimate}>{t('dep_estimate')}</button>
        </FormActions>
      </form>
    </Dialog>
  );
}
