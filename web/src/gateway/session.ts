// Staff sign in with a gateway bearer token (gwst_…, issued by `npm run cli -- token create`): the
// gateway has no password login or cookie. The token is kept in sessionStorage (this tab only) and
// checked against the API before it is accepted.
import { useEffect, useState } from 'preact/hooks';
import { createClient } from '../shared/api';
import { routes, type Operations } from '../generated/gateway-api';

const KEY = 'console.staff_token';
let token: string | null = sessionStorage.getItem(KEY);
const listeners = new Set<() => void>();

export const api = createClient<Operations>(routes, { auth: () => (token ? `Bearer ${token}` : null) });

export async function signIn(value: string) {
  const previous = token;
  token = value.trim();
  try {
    await api.call('G01', { query: { p: 1, page_size: 1 } });
  } catch (e) {
    token = previous;
    throw e;
  }
  sessionStorage.setItem(KEY, token);
  listeners.forEach((f) => f());
}

export function signOut() {
  token = null;
  sessionStorage.removeItem(KEY);
  listeners.forEach((f) => f());
}

export function useSignedIn(): boolean {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return token !== null;
}
