import { Fragment } from 'preact';
import { useState } from 'preact/hooks';
import { t } from '../texts';
import { callKind, channelLabel, formatClock, formatCount, formatDay, formatLatency, formatMs, formatUsd, type RelayAttempt, type RelayCall } from './format';

type Names = ReadonlyMap<number, string>;
const COLUMNS = 10;

/** An HTTP status as a green or red badge, with the error code beside it when the call or attempt failed. */
function Outcome({ status, errorCode }: { status: number; errorCode: string | null }) {
  return (
    <div class="outcome">
      <span class={`badge ${errorCode ? 'off' : 'on'}`}>{errorCode ? t('rl_error') : t('rl_success')}</span> <span>{status || '—'}</span>
      {errorCode && <code class="error-code">{errorCode}</code>}
    </div>
  );
}

/** The model asked for, and the one sent upstream when a mapping changed it. */
function ModelCell({ call }: { call: RelayCall }) {
  const mapped = call.upstream_model && call.upstream_model !== call.model;
  return (
    <td class="model">
      <span>{call.model}</span>
      {mapped && <span class="muted"> → {call.upstream_model}</span>}
      <div class="muted small">{callKind(call)}</div>
    </td>
  );
}

function TokensCell({ call }: { call: RelayCall }) {
  const extra = [
    call.cached_tokens ? t('rl_cached', { n: formatCount(call.cached_tokens) }) : '',
    call.reasoning_tokens ? t('rl_reasoning', { n: formatCount(call.reasoning_tokens) }) : '',
    call.usage_counted ? t('rl_counted') : '',
  ].filter(Boolean);
  return (
    <td class="num">
      {formatCount(call.prompt_tokens)} / {formatCount(call.completion_tokens)}
      {extra.length > 0 && <div class="muted small">{extra.join(' · ')}</div>}
    </td>
  );
}

function ChannelCell({ channelId, keyIndex, names }: { channelId: number | null; keyIndex: number | null; names: Names }) {
  return (
    <td>
      {channelLabel(channelId, names)}
      {channelId !== null && keyIndex !== null && <div class="muted small">{t('rl_key', { n: keyIndex })}</div>}
    </td>
  );
}

/** The attempts of one call, in the order the relay made them. */
function AttemptsRow({ call, names }: { call: RelayCall; names: Names }) {
  return (
    <tr class="attempts" data-attempts-of={call.id}>
      <td colSpan={COLUMNS}>
        <p class="muted small">{t('rl_request', { id: call.request_id })}</p>
        {call.error_detail && <p class="small error-detail">{t('rl_error_detail', { detail: call.error_detail })}</p>}
        {call.attempts.length === 0 ? (
          <p class="muted">{t('rl_no_attempts')}</p>
        ) : (
          <table class="inner">
            <caption>{t('rl_attempts')}</caption>
            <thead>
              <tr>
                <th scope="col">{t('rl_attempt_no')}</th>
                <th scope="col">{t('rl_channel')}</th>
                <th scope="col">{t('rl_outcome')}</th>
                <th scope="col">{t('rl_duration')}</th>
              </tr>
            </thead>
            <tbody>
              {call.attempts.map((a: RelayAttempt, i) => (
                <tr class="attempt">
                  <td>{i + 1}</td>
                  <ChannelCell channelId={a.channel_id} keyIndex={a.key_index} names={names} />
                  <td>
                    <Outcome status={a.status} errorCode={a.error_code} />
                  </td>
                  <td class="num">{formatMs(a.ms)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </td>
    </tr>
  );
}

function CallRow({ call, names, open, onToggle }: { call: RelayCall; names: Names; open: boolean; onToggle: () => void }) {
  return (
    <tr data-id={call.id} class={open ? 'open' : undefined}>
      <td>
        <button
          type="button"
          class="link expander"
          aria-expanded={open}
          aria-label={open ? t('rl_hide_attempts', { id: call.id }) : t('rl_show_attempts', { id: call.id, n: call.attempts.length })}
          onClick={onToggle}
        >
          {open ? '▾' : '▸'}
        </button>
      </td>
      <td class="nowrap">
        {formatClock(call.created_at)}
        <div class="muted small">{formatDay(call.created_at)}</div>
      </td>
      <td class="caller">
        {/* An edge owner by name (the subject on hover); any other caller as the log has it. */}
        {call.caller_name ? <span title={call.caller}>{call.caller_name}</span> : call.caller}
        {call.caller_group && <div class="muted small">{call.caller_group}</div>}
      </td>
      <ModelCell call={call} />
      <ChannelCell channelId={call.channel_id} keyIndex={call.key_index} names={names} />
      <td>
        <Outcome status={call.status} errorCode={call.error_code} />
      </td>
      <TokensCell call={call} />
      <td class="num">{formatUsd(call.cost)}</td>
      <td class="num nowrap">
        {formatLatency(call.first_byte_ms, call.total_ms)}
      </td>
      <td class="num">{call.retries}</td>
    </tr>
  );
}

/** The relay calls of one page, newest first; each row opens onto its attempts. */
export function RelayLogTable({ calls, names, busy }: { calls: RelayCall[]; names: Names; busy: boolean }) {
  const [open, setOpen] = useState<Set<number>>(new Set());
  const toggle = (id: number) => {
    const next = new Set(open);
    next.has(id) ? next.delete(id) : next.add(id);
    setOpen(next);
  };
  return (
    <div class="table-scroll" tabIndex={0} aria-label={t('rl_log')}>
      <table class="relay-log" aria-busy={busy}>
        <thead>
          <tr>
            <th scope="col">
              <span class="sr-only">{t('rl_attempts')}</span>
            </th>
            <th scope="col">{t('rl_time')}</th>
            <th scope="col">{t('rl_caller')}</th>
            <th scope="col">{t('rl_model')}</th>
            <th scope="col">{t('rl_channel')}</th>
            <th scope="col">{t('rl_outcome')}</th>
            <th scope="col">{t('rl_tokens')}</th>
            <th scope="col">{t('rl_cost')}</th>
            <th scope="col">{t('rl_latency')}</th>
            <th scope="col">{t('rl_retries')}</th>
          </tr>
        </thead>
        <tbody>
          {calls.map((call) => (
            <Fragment key={call.id}>
              <CallRow call={call} names={names} open={open.has(call.id)} onToggle={() => toggle(call.id)} />
              {open.has(call.id) && <AttemptsRow call={call} names={names} />}
            </Fragment>
          ))}
        </tbody>
      </table>
    </div>
  );
}
