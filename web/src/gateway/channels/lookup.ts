// Channels a result table names, looked up once each (G05) and kept for the session: their names and why
// they were disabled. A channel that is gone or cannot be read stays known by its id.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../session';

const known = new Map<number, any>();
const asked = new Set<number>();

async function lookUp(id: number) {
  asked.add(id);
  try {
    known.set(id, await api.call('G05', { params: { id } }));
  } catch {
    // Deleted, or not readable: shown as #id.
  }
}

/** Forgets what is known of a channel (after it changed), so the next render reads it again. */
export function forgetChannel(id: number) {
  asked.delete(id);
  known.delete(id);
}

/** A map id → channel view that fills in (and re-renders the caller) as the given channels are read. */
export function useChannelViews(ids: number[]): ReadonlyMap<number, any> {
  const [, setLookups] = useState(0);
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const missing = [...new Set(ids.filter((id) => !asked.has(id)))];
  useEffect(() => {
    if (!missing.length) return;
    void Promise.all(missing.map(lookUp)).then(() => mounted.current && setLookups((n) => n + 1));
  }, [missing.join(',')]);
  return known;
}
