import type { Operations } from '../../generated/gateway-api';
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Notice, formatTime, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { EdgeTable } from './EdgeTable';
import { OwnerField, ownerConfirmed, useEdgeOwners } from './owners';
import { StepUpSecret } from './StepUpSecret';

type EdgeKey = Operations['GS25']['data'][number];

/** Developer keys (GS25) by owner: issued behind a step-up with the key shown once (GS26), revoked after a confirmation (GS27). */
export function KeysPanel() {
  const [owner, setOwner] = useState('');
  const [shownOwner, setShownOwner] = useState('');
  const [rows, setRows] = useState<EdgeKey[] | null>(null);
  const [issuing, setIssuing] = useState(false);
  const [newOwner, setNewOwner] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const owners = useEdgeOwners(rows);
  const load = (o = shownOwner) => run(async () => setRows(await api.call('GS25', { query: { owner: o || undefined } })));
  useEffect(() => void load(), []);
  const revoke = async (k: EdgeKey) => {
    const yes = await confirm.ask({ title: t('edge_revoke_title'), message: t('edge_revoke_confirm', { id: k.key_id, owner: k.owner }), confirm: t('edge_revoke'), cancel: t('edge_cancel'), danger: true });
    if (!yes) return;
    await run(async () => {
      setNotice('');
      await api.call('GS27', { params: { key_id: k.key_id } });
      setNotice(t('edge_revoke_done', { id: k.key_id }));
      setRows(await api.call('GS25', { query: { owner: shownOwner || undefined } }));
    });
  };
  return (
    <section class="card" aria-labelledby="edge-keys-title" aria-busy={busy}>
      <div class="row spread">
        <h2 id="edge-keys-title">{t('edge_keys')}</h2>
        <button type="button" onClick={() => (setNewOwner(shownOwner), setIssuing(true))}>
          {t('edge_key_issue')}
        </button>
      </div>
      <form class="row" role="search" onSubmit={(e) => (e.preventDefault(), setShownOwner(owner.trim()), void load(owner.trim()))}>
        <OwnerField owners={owners} label={t('edge_filter_owner')} name="owner" value={owner} onInput={setOwner} />
        <button type="submit" disabled={busy}>
          {t('edge_filter')}
        </button>
      </form>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <EdgeTable
        rows={rows}
        head={[t('edge_key_id'), t('edge_owner'), t('edge_created'), t('edge_state'), t('edge_actions')]}
        row={(k) => (
          <tr data-id={k.key_id}>
            <td class="mono">{k.key_id}</td>
            <td>{k.owner}</td>
            <td class="nowrap">{formatTime(k.created_at)}</td>
            <td>{k.revoked_at === null ? <span class="badge on">{t('edge_active')}</span> : <span class="badge off">{t('edge_revoked', { when: formatTime(k.revoked_at) })}</span>}</td>
            <td>
              {k.revoked_at === null && (
                <button type="button" class="link" disabled={busy} onClick={() => void revoke(k)}>
                  {t('edge_revoke')}
                </button>
              )}
            </td>
          </tr>
        )}
      />
      {confirm.dialog}
      {issuing && (
        <StepUpSecret
          title={t('edge_key_issue')}
          shownTitle={(o) => t('edge_key_issued', { owner: o })}
          form={<OwnerField owners={owners} hint={t('edge_owner_hint')} name="new_owner" required value={newOwner} onInput={setNewOwner} />}
          before={() => ownerConfirmed(confirm, owners, newOwner.trim())}
          create={async (proof) => {
            const k = await api.call('GS26', { body: { owner: newOwner.trim() }, headers: { 'x-security-proof': proof } });
            return { owner: k.owner, secret: k.key };
          }}
          onClose={(created) => {
            setIssuing(false);
            if (created) void load();
          }}
        />
      )}
    </section>
  );
}
