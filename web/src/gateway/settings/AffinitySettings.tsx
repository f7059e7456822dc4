import { useEffect, useState } from 'preact/hooks';
import { ErrorBox, Field, Notice, useAction, useConfirm } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Figures, Panel, RecordsTable } from '../widgets';
import { draftOf, newRule, settingsOf, type Draft, type Settings } from './affinity-draft';
import { Check } from './inputs';
import { RuleEditor } from './RuleEditor';

/** GS19 / GS20: every channel-affinity setting with hints; then the cache (G62) and clearing it (G61). */
export function AffinitySettings() {
  const [draft, setDraft] = useState<Draft | null>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const [cacheKey, setCacheKey] = useState(0);
  useEffect(() => void run(async () => setDraft(draftOf((await api.call('GS19')) as Settings))), []);
  const set = <K extends keyof Draft>(k: K, v: Draft[K]) => setDraft((d) => d && { ...d, [k]: v });
  const save = (e: Event) => {
    e.preventDefault();
    if (!draft) return;
    setNotice('');
    void run(async () => {
      const saved = (await api.call('GS20', { body: settingsOf(draft) as never })) as Settings;
      setDraft(draftOf(saved));
      setNotice(t('set_saved'));
      setCacheKey((n) => n + 1);
    });
  };
  return (
    <>
      <Panel id="af-title" title={t('set_affinity')} hint={t('af_hint')}>
        {!draft && !error && <p class="muted">{t('set_loading')}</p>}
        {draft && (
          <form onSubmit={save} class="settings-form">
            <Check name="enabled" label={t('af_enabled')} checked={draft.enabled} onChange={(on) => set('enabled', on)} />
            <Check name="switch_on_success" label={t('af_switch_on_success')} hint={t('af_switch_on_success_hint')} checked={draft.switch_on_success} onChange={(on) => set('switch_on_success', on)} />
            <Check name="keep_on_channel_disabled" label={t('af_keep_on_channel_disabled')} hint={t('af_keep_on_channel_disabled_hint')} checked={draft.keep_on_channel_disabled} onChange={(on) => set('keep_on_channel_disabled', on)} />
            <div class="row">
              <Field label={t('af_max_entries')} hint={t('af_max_entries_hint')} name="max_entries" inputMode="numeric" value={draft.max_entries} onInput={(e) => set('max_entries', e.currentTarget.value)} />
              <Field label={t('af_default_ttl')} hint={t('af_default_ttl_hint')} name="default_ttl_seconds" inputMode="numeric" value={draft.default_ttl_seconds} onInput={(e) => set('default_ttl_seconds', e.currentTarget.value)} />
            </div>
            <h3>{t('af_rules')}</h3>
            <p class="muted small">{t('af_rules_hint')}</p>
            {draft.rules.map((r, i) => (
              <RuleEditor key={r.uid} rule={r} n={i + 1} onChange={(next) => set('rules', draft.rules.map((x) => (x.uid === r.uid ? next : x)))} onRemove={() => set('rules', draft.rules.filter((x) => x.uid !== r.uid))} />
            ))}
            <button type="button" class="secondary" disabled={draft.rules.length >= 100} onClick={() => set('rules', [...draft.rules, newRule('')])}>
              {t('af_add_rule')}
            </button>
            <ErrorBox error={error} />
            {notice && <Notice>{notice}</Notice>}
            <div class="row form-footer">
              <button type="submit" disabled={busy}>
                {t('save')}
              </button>
            </div>
          </form>
        )}
        {!draft && <ErrorBox error={error} />}
      </Panel>
      <AffinityCache key={cacheKey} />
    </>
  );
}

/** G62 statistics with G61: clear every entry, or one rule's, after the console's own confirmation. */
function AffinityCache() {
  const [stats, setStats] = useState<any>(null);
  const [notice, setNotice] = useState('');
  const { busy, error, run } = useAction();
  const confirm = useConfirm();
  const load = () => run(async () => setStats(await api.call('G62')));
  useEffect(() => void load(), []);
  const clear = async (rule?: string) => {
    const ok = await confirm.ask({
      title: rule ? t('af_clear_rule') : t('af_clear_all'),
      message: rule ? t('af_confirm_clear_rule', { rule }) : t('af_confirm_clear_all'),
      confirm: rule ? t('af_clear_rule') : t('af_clear_all'),
      cancel: t('cancel'),
      danger: true,
    });
    if (!ok) return;
    setNotice('');
    await run(async () => {
      const r = await api.call('G61', { query: rule ? { rule_name: rule } : { all: true } });
      setNotice(t('af_cleared', { n: r.deleted }));
      setStats(await api.call('G62'));
    });
  };
  const rules = Object.entries<number>(stats?.by_rule_name ?? {}).map(([rule, n]) => ({ rule, n }));
  return (
    <Panel
      id="af-cache"
      title={t('af_cache')}
      actions={
        <>
          <button type="button" class="secondary" disabled={busy} onClick={load}>
            {t('load')}
          </button>
          <button type="button" class="danger" disabled={busy || !stats} onClick={() => clear()}>
            {t('af_clear_all')}
          </button>
        </>
      }
    >
      {confirm.dialog}
      {stats && <Figures data={stats} keys={['enabled', 'total', 'unknown', 'cache_capacity', 'cache_algo']} />}
      {stats && (
        <RecordsTable
          rows={rules}
          rowKey="rule"
          caption={t('by_rule')}
          columns={[
            { key: 'rule', label: t('af_rule_col') },
            { key: 'n', label: t('af_entries') },
            {
              key: 'clear',
              label: t('actions'),
              render: (r) => (
                <button type="button" class="link" disabled={busy} onClick={() => clear(r.rule)}>
                  {t('af_clear_rule')}
                </button>
              ),
            },
          ]}
        />
      )}
      <ErrorBox error={error} />
      {notice && <Notice>{notice}</Notice>}
    </Panel>
  );
}
