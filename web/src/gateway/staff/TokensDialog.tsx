import { useEffect, useState } from 'preact/hooks';
import type { Operations } from '../../generated/gateway-api';
import { CopyButton, Dialog, ErrorBox, formatTime, Notice, Select, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import type { StaffEntry } from './format';
import { StepUpForm } from '../StepUpForm';

type Token = Operations['GS10']['data'][number];
type Issued = Operations['GS11']['data'];

const TTLS: Array<[string, number | undefined]> = [
  ['never', undefined],
  ['1d', 86400],
  ['30d', 30 * 86400],
  ['90d', 90 * 86400],
  ['365d', 365 * 86400],
];

/** GS10–GS13: the live tokens of an identity (ids and times only), revoke one or all, issue one behind a step-up. */
export function TokensDialog(props: { staff: StaffEntry; me: string; self: boolean; onClose: () => void }) {
  const { staff } = props;
  const [tokens, setTokens] = useState<Token[] | null>(null);
  const [issued, setIssued] = useState<Issued | null>(null);
  const [ttl, setTtl] = useState('never');
  const [notice, setNotice] = useState('');
  const { error, run } = useAction();
  const confirm = useConfirm();
  const load = () =>
    run(async () => {
      setTokens(await api.call('GS10', { params: { id: staff.id } }));
    });
  useEffect(() => void load(), []);
  const revoke = async (id: number) => {
    const ok = await confirm.ask({ title: t('sf_confirm_revoke_title', { id }), message: t('sf_confirm_revoke'), confirm: t('sf_revoke'), cancel: t('cancel'), danger: true });
    if (!ok) return;
    await run(async () => {
      setNotice('');
      await api.call('GS12', { params: { token_id: id } });
      setNotice(t('sf_revoked', { id }));
      setTokens(await api.call('GS10', { params: { id: staff.id } }));
    });
  };
  const revokeAll = async () => {
    const ok = await confirm.ask({ title: t('sf_confirm_revoke_all_title', { name: staff.name }), message: t('sf_confirm_revoke_all', { name: staff.name }), confirm: t('sf_revoke_all'), cancel: t('cancel'), danger: true });
    if (!ok) return;
    await run(async () => {
      setNotice('');
      const r = await api.call('GS13', { params: { id: staff.id } });
      setNotice(t('sf_revoked_all', { n: r.revoked }));
      setTokens(await api.call('GS10', { params: { id: staff.id } }));
    });
  };
  const issue = async (proof: string) => {
    const seconds = TTLS.find(([k]) => k === ttl)?.[1];
    const r = await api.call('GS11', { params: { id: staff.id }, body: seconds ? { ttl_seconds: seconds } : {}, headers: { 'x-security-proof': proof } });
    setNotice('');
    setIssued(r);
    setTokens(await api.call('GS10', { params: { id: staff.id } }));
  };
  return (
    <Dialog title={t('sf_tokens_title', { name: staff.name })} onClose={props.onClose} wide>
      <p class="muted">{t('sf_tokens_hint')}</p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      {tokens && tokens.length === 0 && <p class="muted">{t('sf_no_tokens')}</p>}
      {tokens && tokens.length > 0 && (
        <div class="table-scroll" tabIndex={0} role="region" aria-label={t('sf_tokens_title', { name: staff.name })}>
          <table class="tokens">
            <thead>
              <tr>
                <th scope="col">{t('sf_token_id')}</th>
                <th scope="col">{t('sf_created')}</th>
                <th scope="col">{t('sf_expires')}</th>
                <th scope="col">{t('sf_actions')}</th>
              </tr>
            </thead>
            <tbody>
              {tokens.map((tok) => (
                <tr data-token-id={String(tok.id)}>
                  <td>#{tok.id}</td>
                  <td>{formatTime(tok.created_at)}</td>
                  <td>{tok.expires_at === null ? t('sf_never') : formatTime(tok.expires_at)}</td>
                  <td>
                    <button type="button" class="danger" aria-label={t('sf_revoke_of', { id: tok.id })} onClick={() => void revoke(tok.id)}>
                      {t('sf_revoke')}
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {tokens && tokens.length > 0 && !props.self && (
        <p>
          <button type="button" class="danger" onClick={() => void revokeAll()}>
            {t('sf_revoke_all')}
          </button>
        </p>
      )}
      <h3>{t('sf_issue')}</h3>
      {issued ? (
        <div class="secret-once">
          <p role="status">{t('sf_issued', { id: issued.token_id })}</p>
          <pre class="mono revealed" data-testid="issued-token">
            {issued.token}
          </pre>
          <div class="row">
            <CopyButton text={issued.token} label={t('sf_copy_token')} copied={t('sf_copied')} failed={t('sf_copy_failed')} />
            <button type="button" class="secondary" onClick={() => setIssued(null)}>
              {t('sf_done_issued')}
            </button>
          </div>
        </div>
      ) : staff.disabled ? (
        <p class="muted">{t('sf_disabled')}</p>
      ) : (
        <StepUpForm me={props.me} submit={t('sf_issue')} withProof={issue}>
          <Select label={t('sf_ttl')} name="ttl" value={ttl} onChange={(e) => setTtl(e.currentTarget.value)} options={TTLS.map(([k]) => [k, t(`sf_ttl_${k}`)])} />
        </StepUpForm>
      )}
      <p>
        <button type="button" class="secondary" onClick={props.onClose}>
          {t('close')}
        </button>
      </p>
      {confirm.dialog}
    </Dialog>
  );
}
