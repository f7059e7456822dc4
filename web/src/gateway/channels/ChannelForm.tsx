import { useEffect, useState } from 'preact/hooks';
import { Area, Dialog, ErrorBox, Field, FormActions, Select, useAction } from '../../shared/ui';
import { channelTypes } from '../../generated/gateway-api';
import { api } from '../session';
import { t } from '../texts';

const typeOptions = (): Array<[string, string]> => Object.entries(channelTypes).map(([id, v]) => [id, `${id} · ${v.name}`]);
const EMPTY = { name: '', type: '1', key: '', base_url: '', models: '', group: 'default', priority: '0', weight: '0', tag: '' };

/** Create (single, batch, multi_to_single: G02) or edit (G05 → G03) one channel. */
export function ChannelForm({ id, onClose, onSaved }: { id: number | null; onClose: () => void; onSaved: (message: string) => void }) {
  const [f, setF] = useState(EMPTY);
  const [mode, setMode] = useState('single');
  const [multiKeyMode, setMultiKeyMode] = useState('random');
  const [keyMode, setKeyMode] = useState('replace');
  const [multiKey, setMultiKey] = useState(false);
  const { busy, error, run } = useAction();
  // Editing: the fields stay disabled until the channel is loaded, so nothing typed is overwritten by it.
  const [loaded, setLoaded] = useState(id === null);
  useEffect(() => {
    if (id === null) return;
    run(async () => {
      const c = await api.call('G05', { params: { id } });
      setMultiKey(!!c.channel_info?.is_multi_key);
      setF({ name: c.name ?? '', type: String(c.type ?? 1), key: '', base_url: c.base_url ?? '', models: c.models ?? '', group: c.group ?? 'default', priority: String(c.priority ?? 0), weight: String(c.weight ?? 0), tag: c.tag ?? '' });
      setLoaded(true);
    });
  }, [id]);
  const set = (k: keyof typeof EMPTY) => (e: any) => setF({ ...f, [k]: e.currentTarget.value });
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const channel = {
        name: f.name.trim(),
        type: Number(f.type),
        base_url: f.base_url.trim() || null,
        models: f.models.trim(),
        group: f.group.trim() || 'default',
        priority: Number(f.priority) || 0,
        weight: Number(f.weight) || 0,
        tag: f.tag.trim() || null,
      };
      if (id === null) {
        const d = await api.call('G02', { body: { mode, ...(mode === 'multi_to_single' ? { multi_key_mode: multiKeyMode } : {}), channel: { ...channel, key: f.key } } });
        onSaved(t('created', { n: d?.count ?? 1 }));
      } else {
        await api.call('G03', { body: { id, ...channel, ...(f.key.trim() ? { key: f.key, ...(multiKey ? { key_mode: keyMode as 'append' | 'replace' } : {}) } : {}) } });
        onSaved(t('saved'));
      }
    });
  };
  return (
    <Dialog title={id === null ? t('new_channel') : t('edit_title', { id })} onClose={onClose}>
      <form onSubmit={submit}>
        <fieldset disabled={!loaded} class="plain">
        {id === null && (
          <div class="row">
            <Select label={t('mode')} value={mode} onChange={(e) => setMode(e.currentTarget.value)} options={[['single', t('single')], ['batch', t('batch')], ['multi_to_single', t('multi_to_single')]]} />
            {mode === 'multi_to_single' && <Select label={t('multi_key_mode')} value={multiKeyMode} onChange={(e) => setMultiKeyMode(e.currentTarget.value)} options={[['random', t('random')], ['polling', t('polling')]]} />}
          </div>
        )}
        <div class="row">
          <Field label={t('name')} name="name" value={f.name} onInput={set('name')} />
          <Select label={t('type')} name="type" value={f.type} onChange={set('type')} options={typeOptions()} />
        </div>
        <Area label={t('key')} name="key" required={id === null} value={f.key} onInput={set('key')} placeholder={id === null ? t('key_create_hint') : t('key_edit_hint')} />
        {id !== null && multiKey && <Select label={t('key_mode')} value={keyMode} onChange={(e) => setKeyMode(e.currentTarget.value)} options={[['append', t('append')], ['replace', t('replace')]]} />}
        <Field label={t('base_url')} name="base_url" type="url" value={f.base_url} onInput={set('base_url')} placeholder={channelTypes[Number(f.type)]?.baseUrl} />
        <Field label={t('models')} name="models" value={f.models} onInput={set('models')} />
        <div class="row">
          <Field label={t('group')} name="group" value={f.group} onInput={set('group')} />
          <Field label={t('tag')} name="tag" value={f.tag} onInput={set('tag')} />
          <Field label={t('priority')} name="priority" type="number" value={f.priority} onInput={set('priority')} />
          <Field label={t('weight')} name="weight" type="number" min={0} value={f.weight} onInput={set('weight')} />
        </div>
        </fieldset>
        <FormActions error={error} submit={t('save')} disabled={busy || !loaded} cancel={t('cancel')} onCancel={onClose} />
      </form>
    </Dialog>
  );
}

/** G10 behind GS01: a TOTP code of the signed-in root yields a single-use proof for this channel. */
export function RevealKey({ id, onClose }: { id: number; onClose: () => void }) {
  const [code, setCode] = useState('');
  const [key, setKey] = useState<string | null>(null);
  const { busy, error, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    run(async () => {
      const proof = await api.call('GS01', { body: { code: code.trim(), scope: 'channel.key.read', context: { channel_id: id } } });
      const d = await api.call('G10', { params: { id }, headers: { 'x-security-proof': proof.proof_token } });
      setKey(d.key);
    });
  };
  return (
    <Dialog title={t('reveal_title', { id })} onClose={onClose}>
      {key !== null ? (
        <pre class="mono" data-testid="revealed-key">
          {key}
        </pre>
      ) : (
        <form onSubmit={submit}>
          <p class="muted">{t('reveal_why')}</p>
          <Field label={t('totp_code')} name="code" autocomplete="one-time-code" inputMode="numeric" required value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <ErrorBox error={error} />
          <button type="submit" disabled={busy}>
            {t('verify')}
          </button>
        </form>
      )}
      <p>
        <button type="button" class="secondary" onClick={onClose}>
          {t('close')}
        </button>
      </p>
    </Dialog>
  );
}

/** G21: per-key status of a multi-key channel, with enable/disable/delete. */
export function MultiKeys({ id, onClose }: { id: number; onClose: () => void }) {
  const [state, setState] = useState<any>(null);
  const { busy, error, run } = useAction();
  const load = () => run(async () => setState(await api.call('G21', { body: { channel_id: id, action: 'get_key_status', page: 1, page_size: 100 } })));
  useEffect(() => void load(), []);
  const act = (action: string, key_index?: number) =>
    run(async () => {
      await api.call('G21', { body: { channel_id: id, action, ...(key_index !== undefined ? { key_index } : {}) } });
      await load();
    });
  return (
    <Dialog title={`${t('keys')} #${id}`} onClose={onClose}>
      <ErrorBox error={error} />
      {state && (
        <table>
          <thead>
            <tr>
              <th scope="col">{t('key_index')}</th>
              <th scope="col">{t('key_preview')}</th>
              <th scope="col">{t('status')}</th>
              <th scope="col">{t('actions')}</th>
            </tr>
          </thead>
          <tbody>
            {state.keys.map((k: any) => (
              <tr>
                <td>{k.index}</td>
                <td class="mono">{k.key_preview}</td>
                <td>{t(`st_${k.status}`)}</td>
                <td class="row">
                  <button type="button" class="secondary" disabled={busy} onClick={() => act(k.status === 1 ? 'disable_key' : 'enable_key', k.index)}>
                    {k.status === 1 ? t('disable') : t('enable')}
                  </button>
                  <button type="button" class="danger" disabled={busy} onClick={() => act('delete_key', k.index)}>
                    {t('delete')}
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <p class="row">
        <button type="button" class="secondary" disabled={busy} onClick={() => act('enable_all_keys')}>
          {t('enable_all')}
        </button>
        <button type="button" class="secondary" disabled={busy} onClick={() => act('disable_all_keys')}>
          {t('disable_all')}
        </button>
        <button type="button" class="danger" disabled={busy} onClick={() => act('delete_disabled_keys')}>
          {t('delete_disabled_keys')}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          {t('close')}
        </button>
      </p>
    </Dialog>
  );
}
