import { useEffect, useState } from 'preact/hooks';
import { CopyButton, Dialog, ErrorBox, Field, formatTime, Select, useAction, useConfirm } from '../../shared/ui';
import { ApiError } from '../../shared/api';
import { api } from '../session';
import { t } from '../texts';
import { ago, describeReason, duration, explain, failureKind, testMessage } from './format';
import type { TestOutcome } from './context';

/** G10 behind GS01: a TOTP code of the signed-in root yields a single-use proof for this channel. */
export function RevealKey({ id, name, onClose }: { id: number; name: string; onClose: () => void }) {
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
    <Dialog title={t('reveal_title', { name: name || `#${id}` })} onClose={onClose}>
      {key !== null ? (
        <>
          <p class="muted">{t('reveal_once')}</p>
          <pre class="mono revealed" data-testid="revealed-key">
            {key}
          </pre>
          <p class="row">
            <CopyButton text={key} label={t('copy_key')} copied={t('copied_clipboard')} failed={t('copy_failed')} />
          </p>
        </>
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

const PAGE_SIZE = 20;

/**
 * G21: the keys of a multi-key channel told apart by index, the start the API shows, status, and why and when
 * a key was disabled; each key can be tested (G34 with its index), enabled, disabled or deleted.
 */
export function MultiKeys({ id, name, onClose }: { id: number; name: string; onClose: () => void }) {
  const [state, setState] = useState<any>(null);
  const [status, setStatus] = useState('');
  const [page, setPage] = useState(1);
  const [notice, setNotice] = useState('');
  const [tests, setTests] = useState<Map<number, TestOutcome>>(new Map());
  const [testing, setTesting] = useState<number | null>(null);
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const load = () =>
    run(async () => {
      const d = await api.call('G21', { body: { channel_id: id, action: 'get_key_status', page, page_size: PAGE_SIZE, ...(status ? { status: Number(status) } : {}) } });
      if (!('keys' in d)) return;
      setState(d);
      if (d.page !== page) setPage(d.page);
    });
  useEffect(() => void load(), [page, status]);
  const act = (action: string, done: string, key_index?: number) =>
    run(async () => {
      setNotice('');
      await api.call('G21', { body: { channel_id: id, action, ...(key_index !== undefined ? { key_index } : {}) } });
      setNotice(done);
      await load();
    });
  const test = async (index: number) => {
    setTesting(index);
    let outcome: TestOutcome;
    try {
      const d = await api.call('G34', { params: { id }, query: { key_index: index } });
      outcome = { ok: true, ms: d?.response_time, at: Date.now() };
    } catch (e) {
      outcome = { ok: false, message: testMessage(e), code: e instanceof ApiError ? e.code : null, upstreamStatus: e instanceof ApiError ? ((e.data as any)?.upstream_status ?? null) : null, at: Date.now() };
    }
    setTests((m) => new Map(m).set(index, outcome));
    setTesting(null);
  };
  const keys: any[] = state?.keys ?? [];
  const pages = state?.total_pages ?? 1;
  return (
    <Dialog title={t('keys_title', { name: name || `#${id}` })} onClose={onClose} wide>
      {state && (
        <p class="chips" aria-label={t('key_counts')}>
          <span class="badge on">{t('keys_enabled', { n: state.enabled_count })}</span>
          <span class="badge off">{t('keys_manual', { n: state.manual_disabled_count })}</span>
          <span class="badge off">{t('keys_auto', { n: state.auto_disabled_count })}</span>
        </p>
      )}
      <div class="row">
        <Select
          label={t('status')}
          name="key_status"
          value={status}
          onChange={(e) => {
            setPage(1);
            setStatus(e.currentTarget.value);
          }}
          options={[['', t('any')], ['1', t('st_1')], ['2', t('st_2')], ['3', t('st_3')]]}
        />
        <span class="muted small">{t('key_preview_hint')}</span>
      </div>
      {notice && (
        <div class="notice" role="status">
          {notice}
        </div>
      )}
      {error ? (
        <div class="alert" role="alert">
          {explain(error).message}
        </div>
      ) : null}
      {state && keys.length === 0 && <p class="muted">{t('none')}</p>}
      {keys.length > 0 && (
        <div class="table-scroll" tabIndex={0} aria-label={t('keys_title', { name: name || `#${id}` })}>
          <table class="keys">
            <thead>
              <tr>
                <th scope="col">{t('key_index')}</th>
                <th scope="col">{t('key_preview')}</th>
                <th scope="col">{t('status')}</th>
                <th scope="col">{t('key_reason')}</th>
                <th scope="col">{t('key_test')}</th>
                <th scope="col">{t('actions')}</th>
              </tr>
            </thead>
            <tbody>
              {keys.map((k: any) => {
                const outcome = tests.get(k.index);
                return (
                  <tr data-index={k.index} class={outcome && !outcome.ok ? 'test-failed' : undefined}>
                    <th scope="row">#{k.index}</th>
                    <td class="mono">{k.key_preview}</td>
                    <td>
                      <span class={`badge ${k.status === 1 ? 'on' : 'off'}`}>{t(`st_${k.status}`)}</span>
                    </td>
                    <td>
                      {k.reason ? <div>{describeReason(k.reason)}</div> : <span class="muted">—</span>}
                      {k.disabled_time ? (
                        <div class="muted small" title={formatTime(k.disabled_time)}>
                          {ago(k.disabled_time)}
                        </div>
                      ) : null}
                    </td>
                    <td>
                      {testing === k.index ? (
                        <span class="muted">{t('testing')}</span>
                      ) : outcome ? (
                        outcome.ok ? (
                          <span class="badge on">
                            {t('test_passed')} {duration(outcome.ms)}
                          </span>
                        ) : (
                          <div class="test-result failed">
                            <span class="badge off">{t('test_failed')}</span>
                            <div class="upstream-message">{outcome.message || failureKind(outcome.code) || ''}</div>
                          </div>
                        )
                      ) : (
                        <span class="muted">—</span>
                      )}
                    </td>
                    <td>
                      <div class="row actions">
                        <button type="button" class="link" disabled={testing !== null} onClick={() => test(k.index)}>
                          {t('test')}
                        </button>
                        <button type="button" class="link" disabled={busy} onClick={() => act(k.status === 1 ? 'disable_key' : 'enable_key', t(k.status === 1 ? 'key_disabled' : 'key_enabled', { n: k.index }), k.index)}>
                          {k.status === 1 ? t('disable') : t('enable')}
                        </button>
                        <button
                          type="button"
                          class="link danger-link"
                          disabled={busy}
                          onClick={async () =>
                            (await confirm.ask({ title: t('confirm_delete_key_title'), message: t('confirm_delete_key', { n: k.index, preview: k.key_preview, name }), confirm: t('delete'), cancel: t('cancel'), danger: true })) &&
                            act('delete_key', t('key_deleted', { n: k.index }), k.index)
                          }
                        >
                          {t('delete')}
                        </button>
                      </div>
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
      {pages > 1 && (
        <nav class="pager" aria-label={t('keys')}>
          <button type="button" class="secondary" disabled={page <= 1} onClick={() => setPage(page - 1)}>
            {t('prev')}
          </button>
          <span>{t('page_of', { page, total: state?.total ?? 0 })}</span>
          <button type="button" class="secondary" disabled={page >= pages} onClick={() => setPage(page + 1)}>
            {t('next')}
          </button>
        </nav>
      )}
      <p class="row">
        <button type="button" class="secondary" disabled={busy} onClick={() => act('enable_all_keys', t('keys_all_enabled'))}>
          {t('enable_all')}
        </button>
        <button
          type="button"
          class="secondary"
          disabled={busy}
          onClick={async () => (await confirm.ask({ title: t('confirm_disable_keys_title'), message: t('confirm_disable_keys', { name }), confirm: t('disable_all'), cancel: t('cancel') })) && act('disable_all_keys', t('keys_all_disabled'))}
        >
          {t('disable_all')}
        </button>
        <button
          type="button"
          class="danger"
          disabled={busy}
          onClick={async () => (await confirm.ask({ title: t('confirm_delete_keys_title'), message: t('confirm_delete_keys', { name }), confirm: t('delete'), cancel: t('cancel'), danger: true })) && act('delete_disabled_keys', t('keys_auto_deleted'))}
        >
          {t('delete_disabled_keys')}
        </button>
        <button type="button" class="secondary" onClick={onClose}>
          {t('close')}
        </button>
      </p>
      {confirm.dialog}
    </Dialog>
  );
}
