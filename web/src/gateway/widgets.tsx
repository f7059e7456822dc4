// Small read-only views shared by the gateway pages: a status badge, a figures grid and a table over
// records with chosen columns.
import type { ComponentChildren } from 'preact';
import { formatTime } from '../shared/ui';
import { t } from './texts';

const GOOD = new Set(['succeeded', 'success', 'running', 'enabled', 'active', 'deployed']);
const BAD = new Set(['failed', 'abandoned', 'error', 'cancelled', 'disabled', 'terminated']);
const BUSY = new Set(['queued', 'pending', 'deploying', 'deployment requested']);

/** A coloured badge for a status word; the label is translated when the texts know it. */
export function StatusBadge({ status }: { status: string | boolean | null | undefined }) {
  const s = String(status ?? '—').toLowerCase();
  const kind = BUSY.has(s) ? 'busy' : GOOD.has(s) ? 'on' : BAD.has(s) ? 'off' : '';
  const label = t(`s_${s}`);
  return <span class={`badge ${kind}`}>{label.startsWith('s_') ? s : label}</span>;
}

/** Named figures (counts, settings) as a labelled grid; label keys are looked up as `f_<key>`. */
export function Figures({ data, keys, label }: { data: Record<string, unknown>; keys?: string[]; label?: string }) {
  const entries = (keys ?? Object.keys(data)).filter((k) => data[k] !== undefined && (typeof data[k] !== 'object' || data[k] === null));
  return (
    <dl class="figures" aria-label={label}>
      {entries.map((k) => (
        <div data-key={k}>
          <dt>{fieldLabel(k)}</dt>
          <dd>{typeof data[k] === 'boolean' ? <StatusBadge status={data[k] as boolean} /> : String(data[k] ?? '—')}</dd>
        </div>
      ))}
    </dl>
  );
}

export function fieldLabel(key: string) {
  const text = t(`f_${key}`);
  return text.startsWith('f_') ? key : text;
}

export type Column = { key: string; label?: string; render?: (row: any) => ComponentChildren; time?: boolean };

/** A table over records; arrays are listed comma-separated, `time` columns are unix seconds. */
export function RecordsTable({ rows, columns, caption, rowKey }: { rows: any[]; columns: Column[]; caption?: string; rowKey?: string }) {
  if (!rows.length)
    return (
      <p class="muted">
        {caption && `${caption}: `}
        {t('none')}
      </p>
    );
  return (
    <table>
      {caption && <caption>{caption}</caption>}
      <thead>
        <tr>
          {columns.map((c) => (
            <th scope="col">{c.label ?? fieldLabel(c.key)}</th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((r) => (
          <tr data-id={rowKey ? String(r[rowKey]) : undefined}>
            {columns.map((c) => (
              <td>{c.render ? c.render(r) : c.time ? formatTime(r[c.key]) : Array.isArray(r[c.key]) ? r[c.key].join(', ') || '—' : String(r[c.key] ?? '—')}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** A titled card with its own load button, for read-outs loaded on demand. */
export function Panel(props: { id: string; title: string; hint?: string; children: ComponentChildren; actions?: ComponentChildren }) {
  return (
    <section class="card" aria-labelledby={props.id}>
      <div class="row spread">
        <h2 id={props.id}>{props.title}</h2>
        <div class="row">{props.actions}</div>
      </div>
      {props.hint && <p class="muted">{props.hint}</p>}
      {props.children}
    </section>
  );
}

/** Previous / next with "page n · total in all". */
export function Pager({ page, total, pageSize, label, onPage }: { page: number; total: number; pageSize: number; label: string; onPage: (p: number) => void }) {
  const pages = Math.max(1, Math.ceil(total / pageSize));
  return (
    <nav class="pager" aria-label={label}>
      <button type="button" class="secondary" disabled={page <= 1} onClick={() => onPage(page - 1)}>
        {t('prev')}
      </button>
      <span>{t('page_of', { page, total })}</span>
      <button type="button" class="secondary" disabled={page >= pages} onClick={() => onPage(page + 1)}>
        {t('next')}
      </button>
    </nav>
  );
}
