import { useState } from 'preact/hooks';
import { ErrorBox, Field, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { usd, units } from './format';
import { OwnerField, useEdgeOwners } from './owners';

interface UsageLine {
  day: string;
  model: string;
  calls: number;
  failed: number;
  prompt_tokens: number;
  completion_tokens: number;
  cost: number;
}

/** One owner's ended calls per UTC day and public model (GS30), with a total row. */
export function UsagePanel() {
  const [owner, setOwner] = useState('');
  const [days, setDays] = useState('30');
  const [data, setData] = useState<{ owner: string; lines: UsageLine[] } | null>(null);
  const { busy, error, run } = useAction();
  const owners = useEdgeOwners();
  const submit = (e: Event) => {
    e.preventDefault();
    void run(async () => setData(await api.call('GS30', { query: { owner: owner.trim(), days: Number(days) || 30 } })));
  };
  const lines = data?.lines ?? [];
  const sum = (k: keyof UsageLine) => lines.reduce((a, l) => a + Number(l[k]), 0);
  return (
    <section class="card" aria-labelledby="edge-usage-title" aria-busy={busy}>
      <h2 id="edge-usage-title">{t('edge_usage')}</h2>
      <form class="row" onSubmit={submit}>
        <OwnerField owners={owners} name="usage_owner" required value={owner} onInput={setOwner} />
        <Field label={t('edge_days')} name="days" type="number" min={1} max={366} step={1} required value={days} onInput={(e) => setDays(e.currentTarget.value)} />
        <button type="submit" disabled={busy}>
          {t('edge_filter')}
        </button>
      </form>
      <ErrorBox error={error} />
      {!data && <p class="muted">{t('edge_usage_pick')}</p>}
      {data && lines.length === 0 && <p class="muted">{t('none')}</p>}
      {lines.length > 0 && (
        <div class="table-scroll" tabIndex={0}>
          <table aria-label={`${t('edge_usage')}: ${data!.owner}`}>
            <thead>
              <tr>
                <th scope="col">{t('edge_day')}</th>
                <th scope="col">{t('edge_model')}</th>
                <th scope="col">{t('edge_calls')}</th>
                <th scope="col">{t('edge_failed')}</th>
                <th scope="col">{t('edge_prompt_tokens')}</th>
                <th scope="col">{t('edge_completion_tokens')}</th>
                <th scope="col">{t('edge_cost')}</th>
              </tr>
            </thead>
            <tbody>
              {lines.map((l) => (
                <tr data-id={`${l.day} ${l.model}`}>
                  <td class="nowrap">{l.day}</td>
                  <td class="mono">{l.model}</td>
                  <td class="num">{units(l.calls)}</td>
                  <td class="num">{units(l.failed)}</td>
                  <td class="num">{units(l.prompt_tokens)}</td>
                  <td class="num">{units(l.completion_tokens)}</td>
                  <td class="num" title={`${usd(l.cost)} USD`}>
                    {units(l.cost)}
                  </td>
                </tr>
              ))}
              <tr data-id="total">
                <th scope="row" colSpan={2}>
                  {t('edge_total')}
                </th>
                <td class="num">{units(sum('calls'))}</td>
                <td class="num">{units(sum('failed'))}</td>
                <td class="num">{units(sum('prompt_tokens'))}</td>
                <td class="num">{units(sum('completion_tokens'))}</td>
                <td class="num" title={`${usd(sum('cost'))} USD`}>
                  {units(sum('cost'))}
                </td>
              </tr>
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
