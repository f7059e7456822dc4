import type { ComponentChildren } from 'preact';
import { formatTime } from '../../shared/ui';
import { t } from '../texts';
import type { ColumnKey } from './columns';
import { useChannels, type TestOutcome } from './context';
import { ago, automaticReason, describeReason, duration, failureKind, jsonObject, number, quota, speed, statusReason, typeName } from './format';
import { InlineNumber } from './InlineNumber';
import { NOT_RELAYED } from './not-relayed';

/** The last test: this page's own result when there is one, else the time of the last passed test. */
function LastTest({ c, outcome }: { c: any; outcome: TestOutcome | undefined }) {
  if (outcome && !outcome.ok) {
    const kind = failureKind(outcome.code);
    return (
      <div class="test-result failed">
        <span class="badge off">{t('test_failed')}</span>
        {outcome.upstreamStatus ? <span class="muted small"> HTTP {outcome.upstreamStatus}</span> : null}
        <div class="upstream-message">{outcome.message || kind || t('test_failed')}</div>
        {kind && outcome.message && <div class="muted small">{kind}</div>}
      </div>
    );
  }
  if (outcome?.ok)
    return (
      <div class="test-result">
        <span class="badge on">{t('test_passed')}</span> <span class="small">{duration(outcome.ms)}</span>
      </div>
    );
  if (!c.test_time) return <span class="muted">{t('never_tested')}</span>;
  return (
    <span title={formatTime(c.test_time)}>
      {ago(c.test_time)}
    </span>
  );
}

function Reason({ c }: { c: any }) {
  const r = statusReason(c);
  if (!r || (c.status === 1 && !automaticReason(r.reason))) return <span class="muted">—</span>;
  return (
    <div class={`reason ${c.status === 1 ? 'muted' : ''}`}>
      <div>{describeReason(r.reason)}</div>
      {r.time > 0 && (
        <div class="muted small" title={formatTime(r.time)}>
          {ago(r.time)}
        </div>
      )}
    </div>
  );
}

/** One optional cell of a channel row. */
function cell(key: ColumnKey, c: any, outcome: TestOutcome | undefined): ComponentChildren {
  switch (key) {
    case 'id':
      return c.id;
    case 'type':
      return (
        <>
          {typeName(c.type)}
          {NOT_RELAYED.has(c.type) && <div class="muted small">{t('not_relayed_short')}</div>}
        </>
      );
    case 'status':
      return (
        <>
          <span class={`badge ${c.status === 1 ? 'on' : 'off'}`}>{t(`st_${c.status}`)}</span>
          {c.channel_info?.is_multi_key && <div class="muted small">{t('n_keys', { n: c.channel_info.multi_key_size ?? 0 })}</div>}
        </>
      );
    case 'group':
      return String(c.group ?? '').split(',').join(', ');
    case 'models': {
      const models = String(c.models ?? '');
      return (
        <span class="muted models-cell" title={models}>
          {models.length > 60 ? models.slice(0, 60) + '…' : models}
        </span>
      );
    }
    case 'response_time':
      return c.response_time ? <span class={`speed ${speed(c.response_time)}`}>{duration(c.response_time)}</span> : <span class="muted">—</span>;
    case 'balance':
      return c.balance_updated_time ? (
        <>
          {number(Number(c.balance ?? 0))}
          <div class="muted small" title={formatTime(c.balance_updated_time)}>
            {ago(c.balance_updated_time)}
          </div>
        </>
      ) : (
        <span class="muted">—</span>
      );
    case 'last_test':
      return <LastTest c={c} outcome={outcome} />;
    case 'used_quota': {
      const limit = jsonObject(c.settings).quota_limit;
      return (
        <span title={t('quota_units', { n: Number(c.used_quota ?? 0) })}>
          {quota(c.used_quota)}
          {typeof limit === 'number' && limit > 0 && <span class="muted"> / {quota(limit)}</span>}
        </span>
      );
    }
    case 'priority':
      return <InlineNumber c={c} field="priority" />;
    case 'weight':
      return <InlineNumber c={c} field="weight" />;
    case 'tag':
      return c.tag ?? '';
    case 'reason':
      return <Reason c={c} />;
  }
}

/** One channel: selection box, the visible columns and its actions. */
export function ChannelRow({ c, child }: { c: any; child?: boolean }) {
  const ctx = useChannels();
  const outcome = ctx.tests.get(c.id);
  const failed = outcome && !outcome.ok;
  const busy = ctx.pending.has(c.id);
  return (
    <tr data-id={c.id} class={[child ? 'child' : '', failed ? 'test-failed' : ''].join(' ').trim() || undefined} aria-busy={busy}>
      <td>
        <input type="checkbox" aria-label={t('select_one', { id: c.id })} checked={ctx.selected.has(c.id)} onChange={(e) => ctx.select([c.id], e.currentTarget.checked)} />
      </td>
      <th scope="row" class="name-cell">
        {/* A long name is cut short on screen; the tooltip (and screen readers) have all of it. */}
        <span class="name-text" title={c.name || undefined}>
          {c.name || <span class="muted">#{c.id}</span>}
        </span>
        {c.remark && (
          <span class="name-text muted small" title={c.remark}>
            {c.remark}
          </span>
        )}
      </th>
      {ctx.columns.map((k) => (
        <td class={`col-${k}`}>{cell(k, c, outcome)}</td>
      ))}
      <td class="actions-cell">
        <div class="row actions">
          <button type="button" class="link" onClick={() => ctx.open({ kind: 'form', id: c.id })}>
            {t('edit')}
          </button>
          <button type="button" class="link" disabled={busy} onClick={() => ctx.test(c)}>
            {t('test')}
          </button>
          <button type="button" class="link" onClick={() => ctx.toggle(c)}>
            {c.status === 1 ? t('disable') : t('enable')}
          </button>
          <button type="button" class="link" disabled={busy} onClick={() => ctx.balance(c)}>
            {t('balance')}
          </button>
          <button type="button" class="link" onClick={() => ctx.copy(c)}>
            {t('copy')}
          </button>
          {c.channel_info?.is_multi_key && (
            <button type="button" class="link" onClick={() => ctx.open({ kind: 'keys', id: c.id, name: c.name })}>
              {t('keys')}
            </button>
          )}
          <button type="button" class="link" onClick={() => ctx.open({ kind: 'reveal', id: c.id, name: c.name })}>
            {t('reveal')}
          </button>
          <button type="button" class="link danger-link" onClick={() => ctx.remove(c)}>
            {t('delete')}
          </button>
        </div>
      </td>
    </tr>
  );
}
