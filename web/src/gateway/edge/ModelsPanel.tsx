import type { Operations } from '../../generated/gateway-api';
import { useEffect, useState } from 'preact/hooks';
import { Dialog, ErrorBox, Field, FormActions, Notice, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { EdgeTable } from './EdgeTable';
import { usd, units } from './format';

export type EdgeModel = Operations['GS23']['data'][number];

/** Create or change one public model (GS24); the id cannot change once saved. */
function ModelDialog({ model, onClose }: { model: EdgeModel | null; onClose: (saved: boolean) => void }) {
  const [f, setF] = useState({
    id: model?.public_model_id ?? '',
    reserve: String(model?.reserve_amount ?? ''),
    gateway: model?.gateway_model ?? '',
    group: model?.group ?? 'default',
    overdraft: String(model?.overdraft ?? 0),
    enabled: model?.enabled ?? true,
  });
  const set = (k: keyof typeof f) => (e: any) => setF({ ...f, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      const body = { public_model_id: f.id.trim(), reserve_amount: Number(f.reserve), gateway_model: f.gateway.trim() || null, group: f.group.trim() || 'default', overdraft: Number(f.overdraft || 0), enabled: f.enabled };
      await api.call('GS24', { body });
      onClose(true);
    });
  };
  return (
    <Dialog title={model ? t('edge_model_edit', { id: model.public_model_id }) : t('edge_model_new')} onClose={() => onClose(false)}>
      <form onSubmit={submit}>
        <Field label={t('edge_model_id')} hint={t('edge_model_id_hint')} name="public_model_id" required maxLength={128} pattern="[A-Za-z0-9._:\/\-]{1,128}" readOnly={!!model} value={f.id} onInput={set('id')} />
        <Field label={t('edge_reserve')} hint={t('edge_reserve_hint')} name="reserve_amount" type="number" min={0} step={1} required value={f.reserve} onInput={set('reserve')} />
        <Field label={t('edge_gateway_model')} hint={t('edge_gateway_model_hint')} name="gateway_model" maxLength={255} value={f.gateway} onInput={set('gateway')} />
        <Field label={t('edge_group')} name="group" maxLength={64} pattern="[\w.\-]{1,64}" value={f.group} onInput={set('group')} />
        <Field label={t('edge_overdraft')} hint={t('edge_overdraft_hint')} name="overdraft" type="number" min={0} step={1} value={f.overdraft} onInput={set('overdraft')} />
        <label class="row">
          <input type="checkbox" name="enabled" checked={f.enabled} onChange={set('enabled')} /> {t('edge_model_enabled')}
        </label>
        <FormActions error={error} submit={t('edge_save')} disabled={busy} cancel={t('edge_cancel')} onCancel={() => onClose(false)} />
      </form>
    </Dialog>
  );
}

/** The edge's public models (GS23): reserve, gateway model, group, overdraft, state; edited in a dialog, switched on and off in place. */
export function ModelsPanel() {
  const [rows, setRows] = useState<EdgeModel[] | null>(null);
  const [editing, setEditing] = useState<EdgeModel | null | 'new'>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setRows(await api.call('GS23')));
  useEffect(() => void load(), []);
  const toggle = (m: EdgeModel) =>
    run(async () => {
      setNotice('');
      await api.call('GS24', { body: { public_model_id: m.public_model_id, reserve_amount: m.reserve_amount, gateway_model: m.gateway_model, group: m.group, overdraft: m.overdraft, enabled: !m.enabled } });
      setNotice(t('edge_saved'));
      setRows(await api.call('GS23'));
    });
  return (
    <section class="card" aria-labelledby="edge-models-title" aria-busy={busy}>
      <div class="row spread">
        <h2 id="edge-models-title">{t('edge_models')}</h2>
        <button type="button" onClick={() => setEditing('new')}>
          {t('edge_model_new')}
        </button>
      </div>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <EdgeTable
        rows={rows}
        head={[t('edge_model_id'), t('edge_reserve'), t('edge_gateway_model'), t('edge_group'), t('edge_overdraft'), t('edge_state'), t('edge_actions')]}
        row={(m) => (
          <tr data-id={m.public_model_id}>
            <td class="mono">{m.public_model_id}</td>
            <td class="num" title={`${usd(m.reserve_amount)} USD`}>
              {units(m.reserve_amount)}
            </td>
            <td class="mono">{m.gateway_model ?? <span class="muted">{t('edge_same_as_public')}</span>}</td>
            <td>{m.group}</td>
            <td class="num">{units(m.overdraft)}</td>
            <td>
              <span class={`badge ${m.enabled ? 'on' : 'off'}`}>{m.enabled ? t('edge_enabled') : t('edge_disabled')}</span>
            </td>
            <td>
              <div class="row">
                <button type="button" class="link" onClick={() => setEditing(m)}>
                  {t('edge_edit')}
                </button>
                <button type="button" class="link" disabled={busy} onClick={() => toggle(m)}>
                  {m.enabled ? t('edge_disable') : t('edge_enable')}
                </button>
              </div>
            </td>
          </tr>
        )}
      />
      {editing && (
        <ModelDialog
          model={editing === 'new' ? null : editing}
          onClose={(saved) => {
            setEditing(null);
            if (saved) {
              setNotice(t('edge_saved'));
              void load();
            }
          }}
        />
      )}
    </section>
  );
}
