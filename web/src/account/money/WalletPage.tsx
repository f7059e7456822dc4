// The customer's wallet: the balance in USD (units on hover), spent and calls (AS03), redeeming a top-up
// code (AP18), and the history of top-ups, charges and adjustments (AP10, by kind, paged).
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, Select, formatTime, useAction } from '../../shared/ui';
import type { CustomerLog } from '../../generated/account-api';
import { api } from '../session';
import { count, usd } from '../format';
import { t } from '../texts';
import { LOG_TYPES, Money, Pager, TableBox, logTypeName } from '../widgets';

const PAGE_SIZE = 10;

/** The reason an admin or an import gave, after new-api's full-width colon; '' when none. */
function reasonOf(content: string) {
  const at = content.indexOf('：');
  return at >= 0 ? content.slice(at + 1).trim() : '';
}

function History({ version }: { version: number }) {
  const [type, setType] = useState('0');
  const [page, setPage] = useState(1);
  const [data, setData] = useState<{ items: CustomerLog[]; total: number } | null>(null);
  const { busy, error, run } = useAction();
  useEffect(() => void run(async () => setData(await api.call('AP10', { query: { p: page, page_size: PAGE_SIZE, type: Number(type) } }))), [type, page, version]);
  const detail = (r: CustomerLog) => (r.type === 2 || r.type === 5 ? [r.model_name, r.token_name].filter(Boolean).join(' · ') : reasonOf(r.content));
  return (
    <section class="card" aria-labelledby="history-title">
      <div class="row spread">
        <h2 id="history-title">{t('w_history')}</h2>
        <Select label={t('u_kind')} name="history-type" value={type} onChange={(e) => (setType(e.currentTarget.value), setPage(1))} options={[['0', t('w_all')], ...LOG_TYPES.map((x): [string, string] => [String(x), logTypeName(x)])]} />
      </div>
      <ErrorBox error={error} />
      {data && data.items.length === 0 && <p class="muted">{t('w_no_history')}</p>}
      {data && data.items.length > 0 && (
        <TableBox label={t('w_history')}>
          <table class="history">
            <thead>
              <tr>
                <th scope="col">{t('u_time')}</th>
                <th scope="col">{t('u_kind')}</th>
                <th scope="col">{t('w_detail')}</th>
                <th scope="col">{t('w_amount')}</th>
              </tr>
            </thead>
            <tbody>
              {data.items.map((r) => (
                <tr data-type={r.type}>
                  <td class="small nowrap">{formatTime(r.created_at)}</td>
                  <td>{logTypeName(r.type)}</td>
                  <td class="small">{detail(r) || '—'}</td>
                  <td class="num">
                    <Money units={r.type === 2 ? -r.quota : r.quota} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableBox>
      )}
      {data && data.total > PAGE_SIZE && <Pager page={page} size={PAGE_SIZE} total={data.total} busy={busy} onPage={setPage} />}
    </section>
  );
}

export function WalletPage() {
  const [me, setMe] = useState<{ quota: number; used_quota: number; request_count: number } | null>(null);
  const [code, setCode] = useState('');
  const [notice, setNotice] = useState('');
  const [version, setVersion] = useState(0);
  const balance = useAction();
  const redeem = useAction();
  const load = () => balance.run(async () => setMe(await api.call('AS03')));
  useEffect(() => void load(), []);
  const submit = (e: Event) => {
    e.preventDefault();
    setNotice('');
    void redeem.run(async () => {
      const added = await api.call('AP18', { body: { key: code.trim() } });
      setCode('');
      setNotice(t('w_redeemed', { amount: usd(added) }));
      await load();
      setVersion(version + 1);
    });
  };
  return (
    <>
      <section class="card" aria-labelledby="wallet-title">
        <h2 id="wallet-title">{t('wallet')}</h2>
        {me && (
          <dl class="figures">
            <div data-key="balance">
              <dt>{t('w_balance')}</dt>
              <dd>
                <Money units={me.quota} testid="balance" />
              </dd>
            </div>
            <div data-key="spent">
              <dt>{t('w_spent')}</dt>
              <dd>
                <Money units={me.used_quota} />
              </dd>
            </div>
            <div data-key="calls">
              <dt>{t('u_calls')}</dt>
              <dd>{count(me.request_count)}</dd>
            </div>
          </dl>
        )}
        <p class="muted small">{t('w_units_hint')}</p>
        <ErrorBox error={balance.error} />
      </section>
      <section class="card" aria-labelledby="redeem-title">
        <h2 id="redeem-title">{t('w_redeem')}</h2>
        <form class="row" onSubmit={submit}>
          <Field label={t('w_code')} name="code" required maxLength={1024} autocomplete="off" spellcheck={false} value={code} onInput={(e) => setCode(e.currentTarget.value)} />
          <button type="submit" disabled={redeem.busy}>
            {t('w_redeem_btn')}
          </button>
        </form>
        {notice && <Notice>{notice}</Notice>}
        <ErrorBox error={redeem.error} />
      </section>
      <History version={version} />
    </>
  );
}
