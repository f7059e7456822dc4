// Prices of the public models (AP42) for the user's group (AP30's ratio): per 1M input and output tokens,
// or per call, in USD; searchable. new-api's ratios: ratio 1 is $2 per 1M tokens (500,000 units = 1 USD, one
// unit per token at ratio 1), output costs the completion ratio times input, and the group ratio multiplies all.
import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, useAction } from '../../shared/ui';
import type { ModelPrice } from '../../generated/account-api';
import { api } from '../session';
import { price, UNITS_PER_USD } from '../format';
import { t } from '../texts';
import { TableBox } from '../widgets';

const PER_MILLION = 1_000_000 / UNITS_PER_USD;

export function PricingPage() {
  const [models, setModels] = useState<ModelPrice[] | null>(null);
  const [group, setGroup] = useState<{ name: string; ratio: number }>({ name: 'default', ratio: 1 });
  const [query, setQuery] = useState('');
  const { error, run } = useAction();
  useEffect(() => {
    void run(async () => {
      const [prices, groups] = await Promise.all([api.call('AP42'), api.call('AP30')]);
      const [name, g] = Object.entries(groups)[0] ?? ['default', { ratio: 1 }];
      setGroup({ name, ratio: g.ratio });
      setModels([...prices].sort((a, b) => a.model_name.localeCompare(b.model_name)));
    });
  }, []);
  const needle = query.trim().toLowerCase();
  const shown = (models ?? []).filter((m) => !needle || m.model_name.toLowerCase().includes(needle));
  return (
    <section class="card" aria-labelledby="pricing-title">
      <h2 id="pricing-title">{t('pricing')}</h2>
      <p class="muted">{t('p_intro', { group: group.name, ratio: group.ratio })}</p>
      <form class="row" role="search" onSubmit={(e) => e.preventDefault()}>
        <Field label={t('p_search')} type="search" name="model" value={query} onInput={(e) => setQuery(e.currentTarget.value)} />
      </form>
      <ErrorBox error={error} />
      {models && shown.length === 0 && <p class="muted">{t('p_none')}</p>}
      {shown.length > 0 && (
        <TableBox label={t('pricing')}>
          <table class="prices">
            <thead>
              <tr>
                <th scope="col">{t('u_model')}</th>
                <th scope="col">{t('p_billing')}</th>
                <th scope="col">{t('p_input')}</th>
                <th scope="col">{t('p_output')}</th>
                <th scope="col">{t('p_per_call')}</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((m) => {
                const perCall = m.quota_type === 1;
                const input = m.model_ratio * PER_MILLION * group.ratio;
                return (
                  <tr data-model={m.model_name}>
                    <td class="model">
                      <code>{m.model_name}</code>
                    </td>
                    <td>{perCall ? t('p_by_call') : t('p_by_tokens')}</td>
                    <td class="num" data-col="input">{perCall ? '—' : price(input)}</td>
                    <td class="num" data-col="output">{perCall ? '—' : price(input * m.completion_ratio)}</td>
                    <td class="num" data-col="call">{perCall ? price(m.model_price * group.ratio) : '—'}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </TableBox>
      )}
    </section>
  );
}
