import { Field, Select } from '../../shared/ui';
import { t } from '../texts';
import { RULE_FLAGS, SOURCE_TYPES, type RuleDraft, type SourceType } from './affinity-draft';
import { Check, Lines } from './inputs';

const FLAG_HINTS: Record<string, string> = { skip_retry_on_failure: 'af_skip_retry_hint', include_rule_name: 'af_include_rule_name_hint' };
const FLAG_LABELS: Record<string, string> = { skip_retry_on_failure: 'af_skip_retry', include_using_group: 'af_include_using_group', include_model_name: 'af_include_model_name', include_rule_name: 'af_include_rule_name' };

/** One channel-affinity rule: every field of the reference's rule, with hints. */
export function RuleEditor({ rule, n, onChange, onRemove }: { rule: RuleDraft; n: number; onChange: (r: RuleDraft) => void; onRemove: () => void }) {
  const set = <K extends keyof RuleDraft>(k: K, v: RuleDraft[K]) => onChange({ ...rule, [k]: v });
  const sources = rule.key_sources;
  const setSource = (i: number, change: Partial<{ type: SourceType; value: string }>) => set('key_sources', sources.map((s, j) => (j === i ? { ...s, ...change } : s)));
  return (
    <fieldset class="group rule" data-rule={rule.name}>
      <legend>{rule.name ? `${t('af_rule', { n })} · ${rule.name}` : t('af_rule', { n })}</legend>
      <div class="row">
        <Field label={t('af_name')} hint={t('af_name_hint')} value={rule.name} maxLength={64} onInput={(e) => set('name', e.currentTarget.value)} />
        <Field label={t('af_ttl')} hint={t('af_ttl_hint')} inputMode="numeric" value={rule.ttl_seconds} onInput={(e) => set('ttl_seconds', e.currentTarget.value)} />
      </div>
      <Lines label={t('af_model_regex')} hint={t('af_model_regex_hint')} value={rule.model_regex} onInput={(e) => set('model_regex', e.currentTarget.value)} />
      <Lines label={t('af_path_regex')} hint={t('af_path_regex_hint')} value={rule.path_regex} onInput={(e) => set('path_regex', e.currentTarget.value)} />
      <Lines label={t('af_user_agent_include')} hint={t('af_user_agent_include_hint')} value={rule.user_agent_include} onInput={(e) => set('user_agent_include', e.currentTarget.value)} />
      <fieldset class="plain sources">
        <legend class="label">{t('af_key_sources')}</legend>
        <small class="muted">{t('af_key_sources_hint')}</small>
        {sources.map((s, i) => (
          <div class="row source">
            <Select label={t('af_source_type')} value={s.type} options={SOURCE_TYPES.map((type) => [type, t(`af_src_${type}`)])} onChange={(e) => setSource(i, { type: e.currentTarget.value as SourceType })} />
            <Field label={t('af_source_key')} value={s.value} maxLength={256} onInput={(e) => setSource(i, { value: e.currentTarget.value })} />
            <button type="button" class="link" disabled={sources.length <= 1} onClick={() => set('key_sources', sources.filter((_, j) => j !== i))}>
              {t('af_remove_source')}
            </button>
          </div>
        ))}
        <button type="button" class="secondary" disabled={sources.length >= 16} onClick={() => set('key_sources', [...sources, { type: 'request_header', value: '' }])}>
          {t('af_add_source')}
        </button>
      </fieldset>
      <Field label={t('af_value_regex')} hint={t('af_value_regex_hint')} value={rule.value_regex} maxLength={512} onInput={(e) => set('value_regex', e.currentTarget.value)} />
      <div class="flags">
        {RULE_FLAGS.map((f) => (
          <Check label={t(FLAG_LABELS[f]!)} hint={FLAG_HINTS[f] ? t(FLAG_HINTS[f]!) : undefined} checked={rule[f]} onChange={(on) => set(f, on)} />
        ))}
      </div>
      <button type="button" class="danger" onClick={onRemove}>
        {t('af_remove_rule')}
      </button>
    </fieldset>
  );
}
