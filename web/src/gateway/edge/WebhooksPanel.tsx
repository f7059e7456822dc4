import type { Operations } from '../../generated/gateway-api';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, formatTime, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { EdgeTable } from './EdgeTable';
import { OwnerField, ownerConfirmed, useEdgeOwners } from './owners';
import { StepUpSecret } from './StepUpSecret';

type EdgeWebhook = Operations['GS31']['data'][number];

/** Replays past events (GS34): one by id, or every one from a sequence number on. */
function Replay() {
  const [eventId, setEventId] = useState('');
  const [since, setSince] = useState('');
  const [done, setDone] = useState('');
  const { busy, error, setError, run } = useAction();
  const submit = (e: Event) => {
    e.preventDefault();
    setDone('');
    if (!eventId.trim() === !since.trim()) return setError(new Error(t('edge_replay_one')));
    void run(async () => {
      const r = await api.call('GS34', { body: eventId.trim() ? { event_id: eventId.trim() } : { since: Number(since) } });
      setDone(t('edge_replay_done', r));
    });
  };
  return (
    <form onSubmit={submit} aria-labelledby="edge-replay-title">
      <h3 id="edge-replay-title">{t('edge_replay')}</h3>
      <p class="muted">{t('edge_replay_hint')}</p>
      <div class="row">
        <Field label={t('edge_event_id')} name="event_id" maxLength={64} value={eventId} onInput={(e) => setEventId(e.currentTarget.value)} />
        <Field label={t('edge_since')} name="since" type="number" min={0} step={1} value={since} onInput={(e) => setSince(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {t('edge_replay')}
        </button>
      </div>
      {done && <Notice>{done}</Notice>}
      <ErrorBox error={error} />
    </form>
  );
}

/** Owners' webhook endpoints (GS31): added behind a step-up with the signing secret shown once (GS32), removed after a confirmation (GS33). */
export function WebhooksPanel() {
  const [rows, setRows] = useState<EdgeWebhook[] | null>(null);
  const [adding, setAdding] = useState(false);
  const [form, setForm] = useState({ owner: '', url: '' });
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const owners = useEdgeOwners(rows);
  const load = () => run(async () => setRows(await api.call('GS31')));
  useEffect(() => void load(), []);
  const remove = async (w: EdgeWebhook) => {
    const yes = await confirm.ask({ title: t('edge_remove_title'), message: t('edge_remove_confirm', { url: w.url, owner: w.owner }), confirm: t('edge_remove'), cancel: t('edge_cancel'), danger: true });
    if (!yes) return;
    await run(async () => {
      setNotice('');
      await api.call('GS33', { params: { endpoint_id: w.endpoint_id } });
      setNotice(t('edge_remove_done'));
      setRows(await api.call('GS31'));
    });
  };
  return (
    <section class="card" aria-labelledby="edge-webhooks-title" aria-busy={busy}>
      <div class="row spread">
        <h2 id="edge-webhooks-title">{t('edge_webhooks')}</h2>
        <button type="button" onClick={() => (setForm({ owner: '', url: '' }), setAdding(true))}>
          {t('edge_webhook_add')}
        </button>
      </div>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <EdgeTable
        rows={rows}
        head={[t('edge_owner'), t('edge_url'), t('edge_created'), t('edge_state'), t('edge_actions')]}
        row={(w) => (
          <tr data-id={w.endpoint_id}>
            <td>{w.owner}</td>
            <td class="mono" title={`${t('edge_endpoint')}: ${w.endpoint_id}`}>
              {w.url}
            </td>
            <td class="nowrap">{formatTime(w.created_at)}</td>
            <td>{w.removed_at === null ? <span class="badge on">{t('edge_active')}</span> : <span class="badge off">{t('edge_removed', { when: formatTime(w.removed_at) })}</span>}</td>
            <td>
              {w.removed_at === null && (
                <button type="button" class="link" disabled={busy} onClick={() => void remove(w)}>
                  {t('edge_remove')}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      <Replay />
      {confirm.dialog}
      {adding && (
        <StepUpSecret
          title={t('edge_webhook_add')}
          shownTitle={(o) => t('edge_webhook_added', { owner: o })}
          form={
            <>
              <OwnerField owners={owners} hint={t('edge_owner_hint')} name="hook_owner" required value={form.owner} onInput={(owner) => setForm({ ...form, owner })} />
              <Field label={t('edge_url')} name="url" type="url" required maxLength={2048} placeholder="https://" value={form.url} onInput={(e) => setForm({ ...form, url: e.currentTarget.value })} />
            </>
          }
          before={() => ownerConfirmed(confirm, owners, form.owner.trim())}
          create={async (proof) => {
            const w = await api.call('GS32', { body: { owner: form.owner.trim(), url: form.url.trim() }, headers: { 'x-security-proof': proof } });
            return { owner: w.owner, secret: w.secret };
          }}
          onClose={(created) => {
            setAdding(false);
            if (created) void load();
          }}
        />
      )}
    </section>
  );
}
