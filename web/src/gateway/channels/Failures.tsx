import { useState } from 'preact/hooks';
import { api } from '../session';
import { t } from '../texts';
import { Pager } from '../widgets';
import { describeReason, explain, failureKind, statusReason, testMessage } from './format';
import { useChannelViews } from './lookup';
import './channels.css';

export interface JobFailure {
  channel_id: number;
  key_index?: number;
  error_code?: string;
  code?: string;
  disabled?: boolean;
}

const PAGE = 20;

/**
 * The failures of a test-all (G33) or balance (G35) job, a row each: the channel's name, the key, what
 * happened in words, whether the channel was disabled and the upstream's message — the stored reason of a
 * disabled channel, or what a new try (G34 / G36) answers.
 */
export function ChannelFailures({ failures, kind, caption }: { failures: JobFailure[]; kind: 'test' | 'balance'; caption: string }) {
  const [page, setPage] = useState(1);
  const [again, setAgain] = useState<Map<string, { running?: boolean; ok?: boolean; message?: string }>>(new Map());
  const rows = failures.slice((page - 1) * PAGE, page * PAGE);
  const views = useChannelViews(rows.map((f) => f.channel_id));
  if (!failures.length) return null;
  const keyOf = (f: JobFailure) => `${f.channel_id}:${f.key_index ?? ''}`;
  const retry = async (f: JobFailure) => {
    const k = keyOf(f);
    setAgain((m) => new Map(m).set(k, { running: true }));
    let r: { ok: boolean; message: string };
    try {
      if (kind === 'test') {
        await api.call('G34', { params: { id: f.channel_id }, query: f.key_index !== undefined ? { key_index: f.key_index } : {} });
        r = { ok: true, message: t('retry_passed') };
      } else {
        const d = await api.call('G36', { params: { id: f.channel_id } });
        r = { ok: true, message: t('retry_balance', { balance: String(d?.balance ?? ''), currency: d?.currency ?? '' }) };
      }
    } catch (e) {
      r = { ok: false, message: kind === 'test' ? testMessage(e) : explain(e).message };
    }
    setAgain((m) => new Map(m).set(k, r));
  };
  return (
    <div class="table-scroll" tabIndex={0} role="region" aria-label={caption}>
      <table class="failures">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">{t('fx_channel')}</th>
            {kind === 'test' && <th scope="col">{t('fx_key')}</th>}
            <th scope="col">{t('fx_what')}</th>
            <th scope="col">{t('fx_message')}</th>
            <th scope="col">{t('actions')}</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((f) => {
            const c = views.get(f.channel_id);
            const code = f.error_code ?? f.code ?? '';
            const reason = f.disabled && c ? statusReason(c) : null;
            const retried = again.get(keyOf(f));
            return (
              <tr data-id={f.channel_id}>
                <th scope="row" class="name-cell">
                  {c?.name ?? t('fx_channel_id', { id: f.channel_id })}
                  {c?.name && <span class="muted small"> #{f.channel_id}</span>}
                </th>
                {kind === 'test' && <td>{f.key_index !== undefined ? `#${f.key_index}` : '—'}</td>}
                <td>
                  {failureKind(code) ?? t('fx_code_only')} <code class="small">{code}</code>
                  {f.disabled && (
                    <div>
                      <span class="badge off">{t('fx_disabled')}</span>
                    </div>
                  )}
                </td>
                <td class="upstream-message">
                  {retried && !retried.running ? (
                    <span class={retried.ok ? 'speed fast' : 'test-result failed'}>{retried.message}</span>
                  ) : reason ? (
                    describeReason(reason.reason)
                  ) : (
                    <span class="muted">{t('fx_no_message')}</span>
                  )}
                </td>
                <td>
                  <button type="button" class="link" disabled={retried?.running} onClick={() => retry(f)}>
                    {retried?.running ? t('testing') : kind === 'test' ? t('fx_test_again') : t('fx_read_again')}
                  </button>
                </td>
              </tr>
            );
          })}
        </tbody>
      </table>
      {failures.length > PAGE && <Pager page={page} total={failures.length} pageSize={PAGE} label={caption} onPage={setPage} />}
    </div>
  );
}
