import { useEffect, useState } from 'preact/hooks';
import { Dialog, useAction } from '../../shared/ui';
import { channelTypes, QUOTA_PER_USD } from '../../generated/gateway-api';
import { api } from '../session';
import { t } from '../texts';
import { explain, jsonObject, typeOptions } from './format';
import { Check, Choice, TextBox, TextField } from './fields';
import { ModelPicker, type FetchSource } from './ModelPicker';
import { NOT_RELAYED } from './not-relayed';

const TYPE_AZURE = 3;
const TYPE_VERTEX = 41;
const TYPE_CODEX = 57;

/** Keys of `settings` the relay and the model-update jobs read; the form edits them one by one. */
const RELAY_SETTINGS = ['quota_limit', 'breaker_failures', 'breaker_window_seconds', 'breaker_cooldown_seconds'] as const;
const UPDATE_CHECK = 'upstream_model_update_check_enabled';
const UPDATE_SYNC = 'upstream_model_update_auto_sync_enabled';
/** Keys the model-update jobs keep in `settings` for themselves: kept as stored, not shown. */
const MANAGED_SETTINGS = /^upstream_model_update_(last_|ignored_)/;

type Form = {
  name: string;
  type: string;
  key: string;
  base_url: string;
  other: string;
  openai_organization: string;
  models: string;
  test_model: string;
  group: string;
  tag: string;
  priority: string;
  weight: string;
  auto_ban: boolean;
  remark: string;
  model_mapping: string;
  status_code_mapping: string;
  param_override: string;
  header_override: string;
  proxy: string;
  setting_extra: string;
  quota_limit: string;
  breaker_failures: string;
  breaker_window_seconds: string;
  breaker_cooldown_seconds: string;
  update_check: boolean;
  update_sync: boolean;
  settings_extra: string;
};

const EMPTY: Form = {
  name: '',
  type: '1',
  key: '',
  base_url: '',
  other: '',
  openai_organization: '',
  models: '',
  test_model: '',
  group: 'default',
  tag: '',
  priority: '0',
  weight: '0',
  auto_ban: true,
  remark: '',
  model_mapping: '',
  status_code_mapping: '',
  param_override: '',
  header_override: '',
  proxy: '',
  setting_extra: '',
  quota_limit: '',
  breaker_failures: '',
  breaker_window_seconds: '',
  breaker_cooldown_seconds: '',
  update_check: false,
  update_sync: false,
  settings_extra: '',
};

const pretty = (o: Record<string, unknown>) => (Object.keys(o).length ? JSON.stringify(o, null, 2) : '');
const without = (o: Record<string, unknown>, drop: (k: string) => boolean) => Object.fromEntries(Object.entries(o).filter(([k]) => !drop(k)));
const list = (text: string) => [...new Set(text.split(/[,\n]/).map((s) => s.trim()).filter(Boolean))];

/** The form's values from a stored channel (G05). */
function fromChannel(c: any): { form: Form; managed: Record<string, unknown> } {
  const setting = jsonObject(c.setting);
  const settings = jsonObject(c.settings);
  const num = (k: string) => (settings[k] === undefined || settings[k] === null ? '' : String(settings[k]));
  return {
    form: {
      name: c.name ?? '',
      type: String(c.type ?? 1),
      key: '',
      base_url: c.base_url ?? '',
      other: c.other ?? '',
      openai_organization: c.openai_organization ?? '',
      models: list(c.models ?? '').join(','),
      test_model: c.test_model ?? '',
      group: c.group ?? 'default',
      tag: c.tag ?? '',
      priority: String(c.priority ?? 0),
      weight: String(c.weight ?? 0),
      auto_ban: c.auto_ban !== 0,
      remark: c.remark ?? '',
      model_mapping: c.model_mapping ?? '',
      status_code_mapping: c.status_code_mapping ?? '',
      param_override: c.param_override ?? '',
      header_override: c.header_override ?? '',
      proxy: typeof setting.proxy === 'string' ? setting.proxy : '',
      setting_extra: pretty(without(setting, (k) => k === 'proxy')),
      quota_limit: num('quota_limit'),
      breaker_failures: num('breaker_failures'),
      breaker_window_seconds: num('breaker_window_seconds'),
      breaker_cooldown_seconds: num('breaker_cooldown_seconds'),
      update_check: settings[UPDATE_CHECK] === true,
      update_sync: settings[UPDATE_SYNC] === true,
      settings_extra: pretty(without(settings, (k) => (RELAY_SETTINGS as readonly string[]).includes(k) || k === UPDATE_CHECK || k === UPDATE_SYNC || MANAGED_SETTINGS.test(k))),
    },
    managed: without(settings, (k) => !MANAGED_SETTINGS.test(k)),
  };
}

type Errors = Partial<Record<string, string>>;

/** Checks what the API does not (it stores `setting` and `settings` as any JSON object): the form's own rules. */
function checkLocally(f: Form): Errors {
  const errors: Errors = {};
  if (f.proxy.trim() && !/^(https?|socks5h?):\/\/[^\s]+$/i.test(f.proxy.trim())) errors.proxy = t('v_proxy');
  if (f.quota_limit.trim() && !(Number(f.quota_limit) > 0)) errors.quota_limit = t('v_positive', { field: t('fl_quota_limit') });
  for (const k of ['breaker_failures', 'breaker_window_seconds', 'breaker_cooldown_seconds'] as const) {
    const v = f[k].trim();
    if (v && !(Number.isInteger(Number(v)) && Number(v) > 0)) errors[k] = t('v_positive_integer', { field: t(`fl_${k}`) });
  }
  for (const k of ['setting_extra', 'settings_extra'] as const) {
    if (!f[k].trim()) continue;
    try {
      const v = JSON.parse(f[k]);
      if (!v || typeof v !== 'object' || Array.isArray(v)) throw new Error('not an object');
    } catch {
      errors[k] = t('v_json_object', { field: t(`fl_${k}`) });
    }
  }
  return errors;
}

/** The channel as the API takes it (G02's `channel`, G03's body), from the form. */
function toChannel(f: Form, managed: Record<string, unknown>) {
  const setting = { ...(f.setting_extra.trim() ? JSON.parse(f.setting_extra) : {}), ...(f.proxy.trim() ? { proxy: f.proxy.trim() } : {}) };
  const relay = Object.fromEntries(RELAY_SETTINGS.filter((k) => f[k].trim()).map((k) => [k, Number(f[k])]));
  const settings = {
    ...managed,
    ...(f.settings_extra.trim() ? JSON.parse(f.settings_extra) : {}),
    ...relay,
    ...(f.update_check ? { [UPDATE_CHECK]: true } : {}),
    ...(f.update_check && f.update_sync ? { [UPDATE_SYNC]: true } : {}),
  };
  return {
    name: f.name.trim(),
    type: Number(f.type),
    base_url: f.base_url.trim(),
    other: f.other.trim(),
    openai_organization: f.openai_organization.trim() || null,
    models: list(f.models).join(','),
    test_model: f.test_model.trim() || null,
    group: list(f.group).join(',') || 'default',
    tag: f.tag.trim() || null,
    priority: f.priority.trim() === '' ? 0 : Number(f.priority),
    weight: f.weight.trim() === '' ? 0 : Number(f.weight),
    auto_ban: f.auto_ban ? 1 : 0,
    remark: f.remark.trim() || null,
    model_mapping: f.model_mapping.trim(),
    status_code_mapping: f.status_code_mapping.trim(),
    param_override: f.param_override.trim(),
    header_override: f.header_override.trim(),
    setting: Object.keys(setting).length ? JSON.stringify(setting) : '',
    settings: Object.keys(settings).length ? JSON.stringify(settings) : '',
  };
}

/** What to call the `other` field for a type, and what to put there. */
function otherField(type: number): { label: string; hint: string; placeholder: string } {
  if (type === TYPE_AZURE) return { label: t('fl_api_version'), hint: t('other_hint_azure'), placeholder: '2024-10-21' };
  if (type === TYPE_VERTEX) return { label: t('fl_region'), hint: t('other_hint_vertex'), placeholder: '{"default": "us-central1"}' };
  return { label: t('fl_other'), hint: t('other_hint'), placeholder: '' };
}

function keyHint(create: boolean, mode: string, type: number, multi: { size: number } | null): string {
  if (!create) return multi ? t('key_hint_edit_multi', { n: multi.size }) : t('key_hint_edit');
  if (mode === 'batch') return t('key_hint_batch');
  if (mode === 'multi_to_single') return type === TYPE_VERTEX ? t('key_hint_multi_vertex') : t('key_hint_multi');
  if (type === TYPE_CODEX) return t('key_hint_codex');
  if (type === TYPE_VERTEX) return t('key_hint_vertex');
  return t('key_hint_single');
}

/**
 * Create (single, batch, multi-key: G02) or edit (G05 → G03) a channel with every field the API accepts; the
 * API's validation messages are shown at the field they are about. An edit sends only the changed fields.
 */
export function ChannelForm({ id, onClose, onSaved }: { id: number | null; onClose: () => void; onSaved: (message: string) => void }) {
  const create = id === null;
  const [f, setF] = useState<Form>(EMPTY);
  const [loadedForm, setLoadedForm] = useState<Form | null>(null);
  const [managed, setManaged] = useState<Record<string, unknown>>({});
  const [multi, setMulti] = useState<{ size: number; mode: string } | null>(null);
  const [mode, setMode] = useState('single');
  const [multiKeyMode, setMultiKeyMode] = useState('random');
  const [keyMode, setKeyMode] = useState<'append' | 'replace'>('append');
  const [prefixNames, setPrefixNames] = useState(false);
  const [enabled, setEnabled] = useState(true);
  const [picker, setPicker] = useState<FetchSource | null>(null);
  const [errors, setErrors] = useState<Errors>({});
  const [formError, setFormError] = useState<{ message: string; code: string | null } | null>(null);
  const { busy, error: loadError, run } = useAction();
  // Editing: the fields stay disabled until the channel is loaded, so nothing typed is overwritten by it.
  const [loaded, setLoaded] = useState(create);
  useEffect(() => {
    if (create) return;
    run(async () => {
      const c = await api.call('G05', { params: { id } });
      const { form, managed } = fromChannel(c);
      setF(form);
      setLoadedForm(form);
      setManaged(managed);
      if (c.channel_info?.is_multi_key) {
        setMulti({ size: Number(c.channel_info.multi_key_size) || 0, mode: c.channel_info.multi_key_mode ?? 'random' });
        setMultiKeyMode(c.channel_info.multi_key_mode ?? 'random');
      }
      setLoaded(true);
    });
  }, [id]);
  const type = Number(f.type);
  const set = (k: keyof Form) => (e: any) => setF({ ...f, [k]: e.currentTarget.type === 'checkbox' ? e.currentTarget.checked : e.currentTarget.value });
  const err = (k: string) => errors[k] ?? null;
  const focus = (field: string) =>
    setTimeout(() => {
      const el = document.getElementById(`ch-${field}`);
      el?.focus({ preventScroll: true });
      el?.scrollIntoView({ block: 'center' });
    }, 0);

  const fetchModels = () => {
    const key = f.key.trim();
    if (key) setPicker({ type, base_url: f.base_url.trim(), key: key.split('\n').map((k) => k.trim()).find(Boolean) ?? key });
    else if (!create) setPicker({ id: id! });
    else {
      setErrors({ ...errors, key: t('fetch_needs_key') });
      focus('key');
    }
  };

  const submit = (e: Event) => {
    e.preventDefault();
    const local = checkLocally(f);
    setErrors(local);
    setFormError(null);
    const first = Object.keys(local)[0];
    if (first) {
      setFormError({ message: local[first]!, code: null });
      return focus(first);
    }
    run(async () => {
      try {
        const channel = toChannel(f, managed);
        if (create) {
          const d = await api.call('G02', {
            body: {
              mode,
              ...(mode === 'multi_to_single' ? { multi_key_mode: multiKeyMode } : {}),
              ...(mode === 'batch' && prefixNames ? { batch_add_set_key_prefix_2_name: true } : {}),
              channel: { ...channel, key: f.key, status: enabled ? 1 : 2 },
            },
          });
          onSaved(t('created', { n: d?.count ?? 1 }));
        } else {
          // Only what changed: a field left as it was needs no permission and overwrites nobody's edit.
          const before = toChannel(loadedForm!, managed) as Record<string, unknown>;
          const changed = Object.fromEntries(Object.entries(channel).filter(([k, v]) => v !== before[k]));
          const body: Record<string, unknown> = { id, ...changed };
          if (f.key.trim()) Object.assign(body, { key: f.key, ...(multi ? { key_mode: keyMode } : {}) });
          if (multi && multiKeyMode !== multi.mode) body.multi_key_mode = multiKeyMode;
          await api.call('G03', { body: body as any });
          onSaved(t('saved_named', { name: channel.name || `#${id}` }));
        }
      } catch (e) {
        const x = explain(e);
        setFormError({ message: x.message, code: x.code });
        if (x.field) {
          const field = x.field === 'setting' ? 'setting_extra' : x.field === 'settings' ? 'settings_extra' : x.field;
          setErrors({ [field]: x.message });
          focus(field);
        }
      }
    });
  };

  const other = otherField(type);
  const modelList = list(f.models);
  const limitUsd = Number(f.quota_limit) > 0 ? Number(f.quota_limit) / QUOTA_PER_USD : 0;
  return (
    <Dialog title={create ? t('new_channel') : t('edit_title', { name: loadedForm?.name || `#${id}` })} onClose={onClose} wide>
      <form onSubmit={submit} class="channel-form" noValidate>
        {loadError ? (
          <div class="alert" role="alert">
            {explain(loadError).message}
          </div>
        ) : null}
        <fieldset disabled={!loaded} class="plain">
          <fieldset class="group">
            <legend>{t('sec_basics')}</legend>
            {create && (
              <div class="row">
                <Choice name="mode" label={t('mode')} value={mode} onChange={(e) => setMode(e.currentTarget.value)} options={[['single', t('single')], ['batch', t('batch')], ['multi_to_single', t('multi_to_single')]]} />
                {mode === 'multi_to_single' && <Choice name="multi_key_mode" label={t('multi_key_mode')} value={multiKeyMode} onChange={(e) => setMultiKeyMode(e.currentTarget.value)} options={[['random', t('random')], ['polling', t('polling')]]} />}
              </div>
            )}
            <div class="row">
              <TextField name="name" label={t('name')} maxLength={255} value={f.name} onInput={set('name')} error={err('name')} />
              <Choice name="type" label={t('type')} value={f.type} onChange={set('type')} options={typeOptions(create ? undefined : Number(loadedForm?.type))} error={err('type')} hint={NOT_RELAYED.has(type) ? t('type_not_relayed_hint') : undefined} />
            </div>
            {!create && multi && (
              <div class="row">
                <Choice name="multi_key_mode" label={t('multi_key_mode')} value={multiKeyMode} onChange={(e) => setMultiKeyMode(e.currentTarget.value)} options={[['random', t('random')], ['polling', t('polling')]]} />
                <Choice name="key_mode" label={t('key_mode')} value={keyMode} onChange={(e) => setKeyMode(e.currentTarget.value as 'append' | 'replace')} options={[['append', t('append')], ['replace', t('replace')]]} />
              </div>
            )}
            <TextBox name="key" label={t('key')} mono rows={mode === 'single' && !multi ? 2 : 4} autocomplete="off" value={f.key} onInput={set('key')} hint={keyHint(create, mode, type, multi)} error={err('key')} />
            {create && mode === 'batch' && <Check name="prefix_names" label={t('prefix_names')} hint={t('prefix_names_hint')} checked={prefixNames} onChange={setPrefixNames} />}
            {create && <Check name="enabled" label={t('create_enabled')} checked={enabled} onChange={setEnabled} />}
            <TextField name="remark" label={t('fl_remark')} maxLength={255} value={f.remark} onInput={set('remark')} error={err('remark')} />
          </fieldset>

          <fieldset class="group">
            <legend>{t('sec_upstream')}</legend>
            <TextField name="base_url" label={t('base_url')} type="url" value={f.base_url} onInput={set('base_url')} placeholder={channelTypes[type]?.baseUrl || 'https://'} hint={channelTypes[type]?.baseUrl ? t('base_url_hint') : t('base_url_required')} error={err('base_url')} />
            <div class="row">
              <TextField name="other" label={other.label} value={f.other} onInput={set('other')} placeholder={other.placeholder} hint={other.hint} error={err('other')} />
              <TextField name="openai_organization" label={t('fl_organization')} maxLength={255} value={f.openai_organization} onInput={set('openai_organization')} hint={t('organization_hint')} error={err('openai_organization')} />
            </div>
            <TextField name="proxy" label={t('fl_proxy')} value={f.proxy} onInput={set('proxy')} placeholder="socks5://127.0.0.1:1080" hint={t('proxy_hint')} error={err('proxy')} />
          </fieldset>

          <fieldset class="group">
            <legend>{t('sec_models')}</legend>
            <TextBox name="models" label={t('models')} rows={3} value={f.models} onInput={set('models')} hint={t('n_models_listed', { n: modelList.length })} error={err('models')} />
            <div class="row">
              <button type="button" class="secondary" onClick={fetchModels} disabled={!!picker}>
                {t('fetch_models')}
              </button>
              <span class="muted small">{create || f.key.trim() ? t('fetch_with_key') : t('fetch_with_stored')}</span>
            </div>
            {picker && (
              <ModelPicker
                source={picker}
                current={modelList}
                onClose={() => setPicker(null)}
                onPick={(models) => {
                  setF({ ...f, models: models.join(',') });
                  setPicker(null);
                  focus('models');
                }}
              />
            )}
            <div class="row">
              <TextField name="test_model" label={t('fl_test_model')} maxLength={255} list="ch-model-options" value={f.test_model} onInput={set('test_model')} hint={t('test_model_hint')} error={err('test_model')} />
              <datalist id="ch-model-options">
                {modelList.map((m) => (
                  <option value={m} />
                ))}
              </datalist>
            </div>
            <TextBox name="model_mapping" label={t('fl_model_mapping')} mono rows={3} value={f.model_mapping} onInput={set('model_mapping')} placeholder='{"gpt-4o": "gpt-4o-2024-08-06"}' hint={t('model_mapping_hint')} error={err('model_mapping')} />
            <Check name="update_check" label={t('fl_update_check')} hint={t('update_check_hint')} checked={f.update_check} onChange={(on) => setF({ ...f, update_check: on, update_sync: on && f.update_sync })} />
            {f.update_check && <Check name="update_sync" label={t('fl_update_sync')} hint={t('update_sync_hint')} checked={f.update_sync} onChange={(on) => setF({ ...f, update_sync: on })} />}
          </fieldset>

          <fieldset class="group">
            <legend>{t('sec_routing')}</legend>
            <div class="row">
              <TextField name="group" label={t('groups')} value={f.group} onInput={set('group')} error={err('group')} />
              <TextField name="tag" label={t('tag')} maxLength={255} value={f.tag} onInput={set('tag')} error={err('tag')} />
            </div>
            <div class="row">
              <TextField name="priority" label={t('priority')} type="number" step={1} value={f.priority} onInput={set('priority')} hint={t('priority_hint')} error={err('priority')} />
              <TextField name="weight" label={t('weight')} type="number" step={1} value={f.weight} onInput={set('weight')} hint={t('weight_hint')} error={err('weight')} />
            </div>
            <Check name="auto_ban" label={t('fl_auto_ban')} hint={t('auto_ban_hint')} checked={f.auto_ban} onChange={(on) => setF({ ...f, auto_ban: on })} />
          </fieldset>

          <fieldset class="group">
            <legend>{t('sec_relay')}</legend>
            <p class="muted small">{t('relay_settings_hint')}</p>
            <div class="row">
              <TextField name="quota_limit" label={t('fl_quota_limit')} type="number" min={1} value={f.quota_limit} onInput={set('quota_limit')} hint={limitUsd ? t('quota_limit_usd', { usd: limitUsd.toFixed(limitUsd >= 1 ? 2 : 4) }) : t('quota_limit_hint')} error={err('quota_limit')} />
              <TextField name="breaker_failures" label={t('fl_breaker_failures')} type="number" min={1} step={1} placeholder={t('server_default')} value={f.breaker_failures} onInput={set('breaker_failures')} error={err('breaker_failures')} />
            </div>
            <div class="row">
              <TextField name="breaker_window_seconds" label={t('fl_breaker_window_seconds')} type="number" min={1} step={1} placeholder={t('server_default')} value={f.breaker_window_seconds} onInput={set('breaker_window_seconds')} error={err('breaker_window_seconds')} />
              <TextField name="breaker_cooldown_seconds" label={t('fl_breaker_cooldown_seconds')} type="number" min={1} step={1} placeholder={t('server_default')} value={f.breaker_cooldown_seconds} onInput={set('breaker_cooldown_seconds')} error={err('breaker_cooldown_seconds')} />
            </div>
          </fieldset>

          <fieldset class="group">
            <legend>{t('sec_overrides')}</legend>
            <TextBox name="status_code_mapping" label={t('fl_status_code_mapping')} mono rows={2} value={f.status_code_mapping} onInput={set('status_code_mapping')} placeholder='{"400": "500"}' hint={t('status_code_mapping_hint')} error={err('status_code_mapping')} />
            <TextBox name="param_override" label={t('fl_param_override')} mono rows={3} value={f.param_override} onInput={set('param_override')} placeholder='{"temperature": 0.2}' hint={t('param_override_hint')} error={err('param_override')} />
            <TextBox name="header_override" label={t('fl_header_override')} mono rows={3} value={f.header_override} onInput={set('header_override')} placeholder='{"X-Team": "research"}' hint={t('header_override_hint')} error={err('header_override')} />
            <TextBox name="setting_extra" label={t('fl_setting_extra')} mono rows={2} value={f.setting_extra} onInput={set('setting_extra')} hint={t('setting_extra_hint')} error={err('setting_extra')} />
            <TextBox name="settings_extra" label={t('fl_settings_extra')} mono rows={2} value={f.settings_extra} onInput={set('settings_extra')} hint={t('settings_extra_hint')} error={err('settings_extra')} />
          </fieldset>
        </fieldset>
        <div class="form-footer">
          {formError && (
            <div class="alert" role="alert">
              {formError.message}
              {formError.code && <code class="code">{formError.code}</code>}
            </div>
          )}
          <div class="row">
            <button type="submit" disabled={busy || !loaded}>
              {t('save')}
            </button>
            <button type="button" class="secondary" onClick={onClose}>
              {t('cancel')}
            </button>
          </div>
        </div>
      </form>
    </Dialog>
  );
}
