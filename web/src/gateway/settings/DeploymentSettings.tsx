import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Panel } from '../widgets';

type State = { enabled: boolean; configured: boolean; can_connect?: boolean };

/** GS18 with G57 and G58: the io.net switch and the write-only API key, and a connection test. */
export function DeploymentSettings() {
  const [state, setState] = useState<State | null>(null);
  const [enabled, setEnabled] = useState(false);
  const [key, setKey] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const load = async () => {
    const s = (await api.call('G57')) as State;
    setState(s);
    setEnabled(s.enabled);
  };
  useEffect(() => void run(load), []);
  const save = (e: Event) => {
    e.preventDefault();
    setNotice('');
    void run(async () => {
      await api.call('GS18', { body: { enabled, ...(key.trim() ? { api_key: key.trim() } : {}) } });
      setKey('');
      await load();
      setNotice(t('set_saved'));
    });
  };
  const remove = async () => {
    if (!(await confirm.ask({ title: t('ds_remove_key'), message: t('ds_confirm_remove'), confirm: t('ds_remove_key'), cancel: t('cancel'), danger: true }))) return;
    setNotice('');
    void run(async () => {
      await api.call('GS18', { body: { api_key: '' } });
      await load();
      setNotice(t('ds_removed'));
    });
  };
  const test = () => {
    setNotice('');
    void run(async () => {
      const r = await api.call('G58', { body: key.trim() ? { api_key: key.trim() } : {} });
      setNotice(t('ds_test_ok', { n: r.hardware_count, available: r.total_available }));
    });
  };
  return (
    <Panel id="ds-title" title={t('set_deploy')} hint={t('ds_hint')}>
      {confirm.dialog}
      {!state && !error && <p class="muted">{t('set_loading')}</p>}
      {state && (
        <form onSubmit={save} class="settings-form">
          <dl class="figures">
            <div data-key="configured">
              <dt>{t('ds_key_state')}</dt>
              <dd>
                <span class={`badge ${state.configured ? 'on' : 'off'}`}>{state.configured ? t('ds_set') : t('ds_not_set')}</span>
              </dd>
            </div>
            <div data-key="can_connect">
              <dt>{t('ds_connection')}</dt>
              <dd>
                <span class={`badge ${state.can_connect ? 'on' : 'off'}`}>{t(state.can_connect ? 's_true' : 's_false')}</span>
              </dd>
            </div>
          </dl>
          <div class="field check">
            <label>
              <input type="checkbox" name="enabled" checked={enabled} onChange={(e) => setEnabled(e.currentTarget.checked)} /> {t('ds_enabled')}
            </label>
          </div>
          <Field
            label={t('ds_key')}
            hint={state.configured ? t('ds_key_set') : t('ds_key_unset')}
            name="api_key"
            type="password"
            autocomplete="off"
            maxLength={4096}
            value={key}
            onInput={(e) => setKey(e.currentTarget.value)}
          />
          <ErrorBox error={error} />
          {notice && <Notice>{notice}</Notice>}
          <div class="row">
            <button type="submit" disabled={busy}>
              {t('save')}
            </button>
            <button type="button" class="secondary" disabled={busy || (!state.configured && !key.trim())} onClick={test} title={t('ds_test_hint')}>
              {t('ds_test')}
            </button>
            {state.configured && (
              <button type="button" class="danger" disabled={busy} onClick={remove}>
                {t('ds_remove_key')}
              </button>
            )}
          </div>
          <p class="muted small">{t('ds_test_hint')}</p>
        </form>
      )}
    </Panel>
  );
}
