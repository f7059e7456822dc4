// Names of the channels a relay page shows, looked up once each (G05) and kept for the session; a
// channel that is gone or cannot be read stays known by its id.
import { useEffect, useRef, useState } from 'preact/hooks';
import { api } from '../session';

const known = new Map<number, string>();
const asked = new Set<number>();

async function lookUp(id: number) {
  asked.add(id);
  try {
    const channel = await api.call('G05', { params: { id } });
    if (channel?.name) known.set(id, String(channel.name));
  } catch {
    // Deleted, or not readable: the page shows #id.
  }
}

/** A map id → name that fills in (and re-renders the caller) as the given channels are looked up. */
export function useChannelNames(ids: Array<number | null>): ReadonlyMap<number, string> {
  const [, setLookups] = useState(0);
  const mounted = useRef(true);
  useEffect(() => () => void (mounted.current = false), []);
  const missing = [...new Set(ids.filter((id): id is number => id !== null && !asked.has(id)))];
  useEffect(() => {
    if (!missing.length) return;
    void Promise.all(missing.map(lookUp)).then(() => mounted.current && setLookups((n) => n + 1));
  }, [missing.join(',')]);
  return known;
}
