import type { ComponentChildren } from 'preact';
import { t } from '../texts';

/** A list of the Edge tab: nothing while loading, "none" when empty, else a table that scrolls inside its box. */
export function EdgeTable<T>(props: { rows: T[] | null; head: string[]; row: (r: T) => ComponentChildren }) {
  if (!props.rows) return null;
  if (props.rows.length === 0) return <p class="muted">{t('none')}</p>;
  return (
    <div class="table-scroll" tabIndex={0}>
      <table>
        <thead>
          <tr>
            {props.head.map((h) => (
              <th scope="col">{h}</th>
            ))}
          </tr>
        </thead>
        <tbody>{props.rows.map(props.row)}</tbody>
      </table>
    </div>
  );
}
