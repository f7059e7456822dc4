// The signed-in state: the access token lives in memory only; the HttpOnly refresh cookie (path
// /api/user/auth, SameSite=Strict) renews it, and the session id travels as X-Auth-Session so a refresh
// never silently switches to another account's session.
import { useEffect, useState } from 'preact/hooks';
import { createClient } from '../shared/api';
import { routes, type Operations } from '../generated/account-api';

export interface User {
  id: number;
  username: string;
  display_name?: string;
  email?: string;
  role: number;
}
export interface SessionInfo {
  sid: string;
  login_method: string;
}
interface State {
  token: string | null;
  user: User | null;
  session: SessionInfo | null;
  ready: boolean;
}

const state: State = { token: null, user: null, session: null, ready: false };
const listeners = new Set<() => void>();
const changed = () => listeners.forEach((f) => f());
const SID = 'console.sid';

/** The Authorization header of the signed-in session, for calls outside `api` (the playground's stream). */
export const bearer = () => (state.token ? `Bearer ${state.token}` : null);

export const api = createClient<Operations>(routes, {
  auth: bearer,
  onUnauthorized: () => refresh(),
});

/** Stores a session bundle (A25/A29/A30/A36/A01/A24) or an authority rotation (A12–A14, A33, A02). */
export function adopt(bundle: { access_token: string; session?: SessionInfo; user?: User }) {
  state.token = bundle.access_token;
  if (bundle.session) {
    state.session = bundle.session;
    sessionStorage.setItem(SID, bundle.session.sid);
  }
  if (bundle.user) state.user = bundle.user;
  state.ready = true;
  changed();
}

export function clear() {
  state.token = null;
  state.user = null;
  state.session = null;
  state.ready = true;
  sessionStorage.removeItem(SID);
  changed();
}

let inflight: Promise<boolean> | null = null;
/** Renews the access token with the refresh cookie (A24); false when there is no live session. */
export function refresh(): Promise<boolean> {
  inflight ??= (async () => {
    try {
      const sid = sessionStorage.getItem(SID);
      const data = await fetch('/api/user/auth/refresh', {
        method: 'POST',
        credentials: 'same-origin',
        headers: sid ? { 'x-auth-session': sid } : {},
      }).then((r) => r.json());
      if (!data?.success) {
        clear();
        return false;
      }
      adopt(data.data);
      return true;
    } catch {
      clear();
      return false;
    } finally {
      inflight = null;
    }
  })();
  return inflight;
}

export async function logout() {
  try {
    await api.call('A23');
  } finally {
    clear();
  }
}

/** Restores the session after a page load when the readable hint cookie says there is one. */
export async function restore() {
  if (document.cookie.split('; ').includes('new_api_has_session=1')) await refresh();
  else clear();
}

export function useSession(): State {
  const [, set] = useState(0);
  useEffect(() => {
    const f = () => set((n) => n + 1);
    listeners.add(f);
    return () => void listeners.delete(f);
  }, []);
  return state;
}
