// The signed-in tenant: one client of the platform for tenant management, whose session (tokens from
// /auth/api/v1/tenant/login) is kept in localStorage so a reload stays signed in, and saved again each time the
// client refreshes it. When a refresh fails the session is over: listeners are told and the app goes back to sign-in.
import { useSyncExternalStore } from 'react';
import { createClient, type TenantSession } from '@tessera/client';

const KEY = 'tessera.dashboard.session';

/** Tessera's address: the dashboard is served by Tessera's own front door. */
export const API_URL = window.location.origin;

/** The tenant's client (management calls carry its access token, refreshed on a 401). */
export const platform = createClient({ url: API_URL });

type Listener = () => void;
const listeners = new Set<Listener>();
let current: TenantSession | undefined = load();
/** Why the last session ended, shown on the sign-in page. */
let endedBecause: string | undefined;

function load(): TenantSession | undefined {
  try {
    const raw = window.localStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as TenantSession) : undefined;
  } catch {
    return undefined;
  }
}

function save(session: TenantSession | undefined): void {
  current = session;
  try {
    if (session) window.localStorage.setItem(KEY, JSON.stringify(session));
    else window.localStorage.removeItem(KEY);
  } catch {
    // storage refused (private mode): the session lives as long as the page
  }
  for (const l of listeners) l();
}

// The client's own field, kept in step with storage: login, refresh (after a 401) and logout all go through it.
Object.defineProperty(platform.tenant, 'session', {
  configurable: true,
  enumerable: true,
  get: () => current,
  set: (s: TenantSession | undefined) => save(s),
});

/** Ends the session locally (the server side is ended by `logout`), remembering why. */
export function endSession(reason?: string): void {
  endedBecause = reason;
  save(undefined);
}

/** Why the previous session ended, once. */
export function takeEndReason(): string | undefined {
  const r = endedBecause;
  endedBecause = undefined;
  return r;
}

/** The current session (re-renders when it changes). */
export function useSession(): TenantSession | undefined {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
  );
}
