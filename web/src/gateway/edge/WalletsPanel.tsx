import type { Operations } from '../../generated/gateway-api';
import { useEffect, useState } from 'preact/hooks';
import { Dialog, ErrorBox, Field, FormActions, Notice, formatTime, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { EdgeTable } from './EdgeTable';
import { usd, units } from './format';
import { OwnerField, ownerConfirmed, useEdgeOwners } from './owners';

type EdgeWallet = Operations['GS28']['data'][number];

/**
 * Adds units to an owner's wallet (GS29); one Idempotency-Key per dialog, so a repeated submit credits once.
 * A name the edge does not know yet is created only once the user says so.
 */
function CreditDialog({ owner, owners, onClose }: { owner: string; owners: string[]; onClose: (w: EdgeWallet | null) => void }) {
  const [who, setWho] = useState(owner);
  const [amount, setAmount] = useState('');
  const [key] = useState(() => `console-credit-${Date.now().toString(36)}-${Math.random().toString(36).slice(2)}`);
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const n = Number(amount);
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => {
      if (!(await ownerConfirmed(confirm, owners, who.trim()))) return;
      onClose(await api.call('GS29', { params: { owner: who.trim() }, body: { amount: n }, headers: { 'idempotency-key': key } }));
    });
  };
  return (
    <Dialog title={t('edge_credit_title')} onClose={() => onClose(null)}>
      <form onSubmit={submit}>
        <OwnerField owners={owners} hint={owner ? undefined : t('edge_owner_hint')} name="credit_owner" required readOnly={!!owner} value={who} onInput={setWho} />
        <Field
          label={t('edge_amount')}
          hint={Number.isSafeInteger(n) && n > 0 ? t('edge_amount_usd', { usd: usd(n) }) : t('edge_units_hint')}
          name="amount"
          type="number"
          min={1}
          step={1}
          required
          value={amount}
          onInput={(e) => setAmount(e.currentTarget.value)}
        />
        <FormActions error={error} submit={t('edge_credit')} disabled={busy} cancel={t('edge_cancel')} onCancel={() => onClose(null)} />
      </form>
      {confirm.dialog}
    </Dialog>
  );
}

/** Every owner's wallet (GS28): balance, reserved, available, settled calls and what they were charged; credited in a dialog. */
export function WalletsPanel() {
  const [rows, setRows] = useState<EdgeWallet[] | null>(null);
  const [crediting, setCrediting] = useState<string | null>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const load = () => run(async () => setRows(await api.call('GS28')));
  useEffect(() => void load(), []);
  const owners = useEdgeOwners(rows);
  // Units as stored, and what they are worth beside them (500,000 units = 1 USD).
  const money = (n: number) => (
    <>
      {units(n)} <span class="muted small usd">{t('edge_usd', { usd: usd(n) })}</span>
    </>
  );
  return (
    <section class="card" aria-labelledby="edge-wallets-title" aria-busy={busy}>
      <div class="row spread">
        <h2 id="edge-wallets-title">{t('edge_wallets')}</h2>
        <button type="button" onClick={() => (setNotice(''), setCrediting(''))}>
          {t('edge_credit')}
        </button>
      </div>
      <p class="muted">{t('edge_units_hint')}</p>
      {notice && <Notice>{notice}</Notice>}
      <ErrorBox error={error} />
      <EdgeTable
        rows={rows}
        head={[t('edge_owner'), t('edge_balance'), t('edge_reserved'), t('edge_available'), t('edge_settled'), t('edge_charged'), t('edge_actions')]}
        row={(w) => (
          <tr data-id={w.owner} title={formatTime(w.updated_at)}>
            <td>{w.owner}</td>
            <td class="num">{money(w.balance)}</td>
            <td class="num">{money(w.reserved)}</td>
            <td class="num">{money(w.available)}</td>
            <td class="num">{units(w.settled_runs)}</td>
            <td class="num">{money(w.settled_charged)}</td>
            <td>
              <button type="button" class="link" onClick={() => (setNotice(''), setCrediting(w.owner))}>
                {t('edge_credit')}
              </button>
            </td>
          </tr>
        )}
      />
      {crediting !== null && (
        <CreditDialog
          owner={crediting}
          owners={owners}
          onClose={(w) => {
            setCrediting(null);
            if (w) {
              setNotice(t('edge_credit_done', { owner: w.owner, balance: units(w.balance), usd: usd(w.balance) }));
              void load();
            }
          }}
        />
      )}
    </section>
  );
}
