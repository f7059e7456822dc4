import { useEffect, useState } from 'preact/hooks';
import { ApiError } from '../../shared/api';
import { Area, ErrorBox, Field, Notice, useAction } from '../../shared/ui';
import { api } from '../session';
import { t } from '../texts';
import { Panel } from '../widgets';
import { RatioCompare } from './RatioCompare';
import { COLUMNS, CellError, configOf, otherFields, rowsOf, type Column, type GroupRow, type ModelRow, type RatioMaps } from './ratio-rows';

const SHOWN = 200;

/** Where the API or the table found a fault: a named field and model to mark. */
function faultOf(error: unknown): { field?: string; model?: string } {
  if (error instanceof CellError) return { field: error.field, model: error.model };
  if (error instanceof ApiError && error.data && typeof error.data === 'object') return error.data as { field?: string; model?: string };
  return {};
}

/** GS16 / GS17: the gateway's own prices as a table per model (or raw JSON), and group multipliers. */
export function RatioSettings() {
  const [base, setBase] = useState<RatioMaps | null>(null);
  const [models, setModels] = useState<ModelRow[]>([]);
  const [groups, setGroups] = useState<GroupRow[]>([]);
  const [json, setJson] = useState<string | null>(null);
  const [filter, setFilter] = useState('');
  const [newModel, setNewModel] = useState('');
  const [newGroup, setNewGroup] = useState('');
  const [notice, setNotice] = useState('');
  const { busy, error, setError, run } = useAction();
  const show = (config: RatioMaps) => {
    setBase(config);
    const r = rowsOf(config);
    setModels(r.models);
    setGroups(r.groups);
  };
  useEffect(() => void run(async () => show((await api.call('GS16')) as RatioMaps)), []);
  const fault = faultOf(error);
  const message = error instanceof CellError ? t('rc_bad_number', { field: t(`rc_${error.field}`), model: error.model }) : error;

  const parseJson = (text: string): RatioMaps | null => {
    try {
      return JSON.parse(text) as RatioMaps;
    } catch (e) {
      setError(new Error(t('rc_bad_json', { detail: (e as Error).message })));
      return null;
    }
  };
  const toJson = () => {
    setError(null);
    try {
      setJson(JSON.stringify(configOf(base ?? {}, models, groups), null, 2));
    } catch (e) {
      setError(e);
    }
  };
  const toTable = () => {
    setError(null);
    const parsed = parseJson(json ?? '');
    if (!parsed) return;
    show(parsed);
    setJson(null);
  };
  const save = (e: Event) => {
    e.preventDefault();
    setNotice('');
    let body: RatioMaps | null;
    try {
      body = json === null ? configOf(base ?? {}, models, groups) : parseJson(json);
    } catch (err) {
      setError(err);
      return;
    }
    if (!body) return;
    void run(async () => {
      const saved = (await api.call('GS17', { body: body as never })) as RatioMaps;
      show(saved);
      if (json !== null) setJson(JSON.stringify(saved, null, 2));
      setNotice(t('set_saved'));
    });
  };
  const setCell = (model: string, c: Column, value: string) => setModels((rows) => rows.map((r) => (r.model === model ? { ...r, [c]: value } : r)));
  const addModel = () => {
    const name = newModel.trim();
    if (!name) return;
    if (models.some((r) => r.model === name)) return setError(new Error(t('rc_exists', { name })));
    setModels([{ model: name, model_ratio: '', completion_ratio: '', cache_ratio: '', model_price: '' }, ...models]);
    setNewModel('');
    setFilter('');
  };
  const addGroup = () => {
    const name = newGroup.trim();
    if (!name) return;
    if (groups.some((g) => g.group === name)) return setError(new Error(t('rc_exists', { name })));
    setGroups([...groups, { group: name, ratio: '1' }]);
    setNewGroup('');
  };
  const matching = models.filter((r) => !filter || r.model.toLowerCase().includes(filter.toLowerCase()));
  const others = base ? otherFields(base) : [];

  return (
    <form onSubmit={save} class="settings-form">
      <Panel
        id="rc-title"
        title={t('set_ratios')}
        hint={t('rc_hint')}
        actions={
          <button type="button" class="secondary" onClick={json === null ? toJson : toTable}>
            {json === null ? t('rc_json') : t('rc_table')}
          </button>
        }
      >
        {!base && !error && <p class="muted">{t('set_loading')}</p>}
        {base && json !== null && <Area label={t('rc_json_label')} class="mono-input json-editor" rows={18} spellcheck={false} value={json} onInput={(e) => setJson(e.currentTarget.value)} aria-describedby="rc-json-hint" />}
        {base && json !== null && (
          <p class="muted small" id="rc-json-hint">
            {t('rc_json_hint')}
          </p>
        )}
        {base && json === null && (
          <>
            <div class="row">
              <Field label={t('rc_filter')} type="search" value={filter} onInput={(e) => setFilter(e.currentTarget.value)} />
              <Field label={t('rc_new_model')} value={newModel} onInput={(e) => setNewModel(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), addModel())} />
              <button type="button" class="secondary" onClick={addModel}>
                {t('rc_add_model')}
              </button>
            </div>
            <div class="table-scroll" tabIndex={0} role="region" aria-label={t('rc_models')}>
              <table class="ratio-table">
                <thead>
                  <tr>
                    <th scope="col">{t('rc_model')}</th>
                    {COLUMNS.map((c) => (
                      <th scope="col">{t(`rc_${c}`)}</th>
                    ))}
                    <th scope="col">
                      <span class="sr-only">{t('rc_remove_short')}</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {matching.slice(0, SHOWN).map((r) => (
                    <tr data-model={r.model} class={fault.model === r.model ? 'invalid' : undefined}>
                      <th scope="row" class="mono">
                        {r.model}
                      </th>
                      {COLUMNS.map((c) => (
                        <td>
                          <input
                            class="ratio-input"
                            inputMode="decimal"
                            aria-label={t('rc_cell', { field: t(`rc_${c}`), model: r.model })}
                            aria-invalid={fault.model === r.model && fault.field === c ? 'true' : undefined}
                            value={r[c]}
                            onInput={(e) => setCell(r.model, c, e.currentTarget.value)}
                          />
                        </td>
                      ))}
                      <td>
                        <button type="button" class="link" aria-label={t('rc_remove', { name: r.model })} onClick={() => setModels(models.filter((x) => x.model !== r.model))}>
                          {t('rc_remove_short')}
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <p class="muted small">{t('rc_count', { shown: Math.min(matching.length, SHOWN), n: models.length })}</p>
            <h3>{t('rc_groups')}</h3>
            <p class="muted small">{t('rc_groups_hint')}</p>
            <table class="ratio-table groups">
              <thead>
                <tr>
                  <th scope="col">{t('rc_group')}</th>
                  <th scope="col">{t('rc_group_ratio')}</th>
                  <th scope="col">
                    <span class="sr-only">{t('rc_remove_short')}</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {groups.map((g) => (
                  <tr data-group={g.group}>
                    <th scope="row" class="mono">
                      {g.group}
                    </th>
                    <td>
                      <input
                        class="ratio-input"
                        inputMode="decimal"
                        aria-label={t('rc_cell', { field: t('rc_group_ratio'), model: g.group })}
                        aria-invalid={fault.field === 'group_ratio' && fault.model === g.group ? 'true' : undefined}
                        value={g.ratio}
                        onInput={(e) => setGroups(groups.map((x) => (x.group === g.group ? { ...x, ratio: e.currentTarget.value } : x)))}
                      />
                    </td>
                    <td>
                      <button type="button" class="link" aria-label={t('rc_remove', { name: g.group })} onClick={() => setGroups(groups.filter((x) => x.group !== g.group))}>
                        {t('rc_remove_short')}
                      </button>
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
            <div class="row">
              <Field label={t('rc_new_group')} value={newGroup} onInput={(e) => setNewGroup(e.currentTarget.value)} onKeyDown={(e) => e.key === 'Enter' && (e.preventDefault(), addGroup())} />
              <button type="button" class="secondary" onClick={addGroup}>
                {t('rc_add_group')}
              </button>
            </div>
            {others.length > 0 && <p class="muted small">{t('rc_other_fields', { fields: others.join(', ') })}</p>}
          </>
        )}
        <ErrorBox error={message} />
        {notice && <Notice>{notice}</Notice>}
        <div class="row">
          <button type="submit" disabled={busy || !base}>
            {t('save')}
          </button>
        </div>
      </Panel>
      {base && json === null && <RatioCompare onUse={(model, c, value) => (models.some((r) => r.model === model) ? setCell(model, c, value) : setModels([{ model, model_ratio: '', completion_ratio: '', cache_ratio: '', model_price: '', [c]: value }, ...models]))} />}
    </form>
  );
}
