// Creating or editing an API key (AP05, AP06): name, expiry, a spending limit in USD or unlimited, the models
// it may call (picked from AP29), the IPs it may be used from, and its group (AP30: the user's own).
import { useState } from 'preact/hooks';
import { Area, Dialog, Field, FormActions, Select, useAction } from '../../shared/ui';
import type { CustomerToken } from '../../generated/account-api';
import { api } from '../session';
import { localInput, nowSeconds, secondsOf, UNITS_PER_USD, unitsOf } from '../format';
import { t } from '../texts';

const DAY = 86400;
const EXPIRY_CHOICES = ['never', '1', '30', '90', 'custom'] as const;
type Expiry = (typeof EXPIRY_CHOICES)[number];

interface Draft {
  name: string;
  expiry: Expiry;
  expiresAt: string;
  unlimited: boolean;
  limitUsd: string;
  limitModels: boolean;
  models: string[];
  ips: string;
  group: string;
}

function draftOf(token: CustomerToken | null): Draft {
  if (!token) return { name: '', expiry: 'never', expiresAt: localInput(nowSeconds() + 30 * DAY), unlimited: true, limitUsd: '', limitModels: false, models: [], ips: '', group: '' };
  return {
    name: token.name,
    expiry: token.expired_time === -1 ? 'never' : 'custom',
    expiresAt: localInput(token.expired_time === -1 ? nowSeconds() + 30 * DAY : token.expired_time),
    unlimited: token.unlimited_quota,
    limitUsd: token.unlimited_quota ? '' : String(token.remain_quota / UNITS_PER_USD),
    limitModels: token.model_limits_enabled,
    models: token.model_limits ? token.model_limits.split(',').filter(Boolean) : [],
    ips: token.allow_ips,
    group: token.group,
  };
}

/** The settings of a draft in new-api's fields, or the text of what is wrong with it. */
function settingsOf(d: Draft): Record<string, unknown> | string {
  const expired = d.expiry === 'never' ? -1 : d.expiry === 'custom' ? secondsOf(d.expiresAt) : nowSeconds() + Number(d.expiry) * DAY;
  if (expired === undefined) return t('key_expiry_invalid');
  const limit = d.unlimited ? 0 : unitsOf(d.limitUsd);
  if (!d.unlimited && (!Number.isFinite(limit) || limit < 0)) return t('key_limit_invalid');
  if (d.limitModels && d.models.length === 0) return t('key_models_none');
  return {
    name: d.name.trim(),
    expired_time: expired,
    unlimited_quota: d.unlimited,
    remain_quota: limit,
    model_limits_enabled: d.limitModels,
    model_limits: d.limitModels ? d.models.join(',') : '',
    allow_ips: d.ips.trim(),
    group: d.group,
  };
}

export function KeyForm(props: { token: CustomerToken | null; models: string[]; group: string; onDone: (created?: { token: CustomerToken; secret: string }) => void; onCancel: () => void }) {
  const [d, setD] = useState<Draft>(() => draftOf(props.token));
  const { busy, error, setError, run } = useAction();
  const set = (patch: Partial<Draft>) => setD({ ...d, ...patch });
  const models = [...new Set([...props.models, ...d.models])];
  const submit = (e: Event) => {
    e.preventDefault();
    const settings = settingsOf(d);
    if (typeof settings === 'string') return setError(new Error(settings));
    void run(async () => {
      if (!props.token) {
        const created = await api.call('AP05', { body: settings as any });
        props.onDone({ token: { ...created, key: '' }, secret: created.key });
      } else {
        await api.call('AP06', { body: { id: props.token.id, ...(settings as any) } });
        props.onDone();
      }
    });
  };
  return (
    <Dialog title={props.token ? t('key_edit_title', { name: props.token.name }) : t('key_new')} onClose={props.onCancel} wide>
      <form onSubmit={submit} class="key-form">
        <Field label={t('key_name')} name="name" required maxLength={50} value={d.name} onInput={(e) => set({ name: e.currentTarget.value })} />
        <div class="row">
          <Select label={t('key_expiry')} name="expiry" value={d.expiry} onChange={(e) => set({ expiry: e.currentTarget.value as Expiry })} options={EXPIRY_CHOICES.map((c) => [c, t(`key_expiry_${c}`)])} />
          {d.expiry === 'custom' && <Field label={t('key_expires_at')} name="expires_at" type="datetime-local" required value={d.expiresAt} onInput={(e) => set({ expiresAt: e.currentTarget.value })} />}
        </div>
        <fieldset class="plain">
          <legend class="label">{t('key_limit')}</legend>
          <label class="check">
            <input type="checkbox" name="unlimited" checked={d.unlimited} onChange={(e) => set({ unlimited: e.currentTarget.checked })} /> {t('key_unlimited')}
          </label>
          {!d.unlimited && <Field label={t('key_limit_usd')} name="limit" type="number" min={0} step="0.01" inputMode="decimal" required value={d.limitUsd} hint={t('key_limit_hint')} onInput={(e) => set({ limitUsd: e.currentTarget.value })} />}
        </fieldset>
        <fieldset class="plain">
          <legend class="label">{t('key_models')}</legend>
          <label class="check">
            <input type="checkbox" name="limit_models" checked={d.limitModels} onChange={(e) => set({ limitModels: e.currentTarget.checked })} /> {t('key_models_only')}
          </label>
          {d.limitModels && (
            <div class="chips model-picks" role="group" aria-label={t('key_models')}>
              {models.length === 0 && <span class="muted">{t('no_models')}</span>}
              {models.map((m) => (
                <label class="chip">
                  <input type="checkbox" value={m} checked={d.models.includes(m)} onChange={(e) => set({ models: e.currentTarget.checked ? [...d.models, m] : d.models.filter((x) => x !== m) })} /> {m}
                </label>
              ))}
            </div>
          )}
        </fieldset>
        <Area label={t('key_ips')} name="allow_ips" placeholder="203.0.113.7, 10.0.0.0/8" value={d.ips} onInput={(e) => set({ ips: e.currentTarget.value })} />
        <p class="muted small">{t('key_ips_hint')}</p>
        <Select label={t('key_group')} name="group" value={d.group} onChange={(e) => set({ group: e.currentTarget.value })} options={[['', t('key_group_own', { group: props.group || 'default' })], ...(d.group && d.group !== '' ? [[d.group, d.group] as [string, string]] : [])]} />
        <FormActions error={error} submit={props.token ? t('save') : t('key_create')} disabled={busy} cancel={t('cancel')} onCancel={props.onCancel} />
      </form>
    </Dialog>
  );
}
