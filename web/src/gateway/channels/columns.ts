// The optional columns of the channel table and which of them this browser hides (localStorage).
import { useState } from 'preact/hooks';

export const COLUMNS = ['id', 'type', 'status', 'group', 'models', 'response_time', 'balance', 'last_test', 'used_quota', 'priority', 'weight', 'tag', 'reason'] as const;
export type ColumnKey = (typeof COLUMNS)[number];

const STORE = 'console.gateway.channel_columns.hidden';

function readHidden(): Set<ColumnKey> {
  try {
    const v = JSON.parse(localStorage.getItem(STORE) ?? '[]');
    return new Set(Array.isArray(v) ? v.filter((k): k is ColumnKey => (COLUMNS as readonly string[]).includes(k)) : []);
  } catch {
    return new Set();
  }
}

/** The visible columns, in table order, and a toggle that remembers the choice in this browser. */
export function useColumns() {
  const [hidden, setHidden] = useState<Set<ColumnKey>>(readHidden);
  const save = (next: Set<ColumnKey>) => {
    setHidden(next);
    try {
      localStorage.setItem(STORE, JSON.stringify([...next]));
    } catch {
      // Storage refused (private mode): the choice lasts for this page only.
    }
  };
  return {
    visible: COLUMNS.filter((k) => !hidden.has(k)),
    shown: (k: ColumnKey) => !hidden.has(k),
    toggle: (k: ColumnKey, on: boolean) => {
      const next = new Set(hidden);
      if (on) next.delete(k);
      else next.add(k);
      save(next);
    },
    reset: () => save(new Set()),
  };
}
