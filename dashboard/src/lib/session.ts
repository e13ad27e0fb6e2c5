// The signed-in tenant: one client of the platform for tenant management, whose session (tokens from
// /auth/api/v1/tenant/login) is kept in localStorage so a reload stays signed in, and saved again each time the
// client refreshes it. When a refresh fails the session is over: listeners are told and the app goes back to sign-in.
// Sessions last: the access token is refreshed before it expires, one refresh at a time across every tab (a Web Lock;
// a tab that finds the stored session already refreshed by another takes it instead of refreshing again, since a
// rotated refresh token presented twice ends the session), and a tab hears another tab's refresh or sign-out through
// the storage event.
import { useSyncExternalStore } from 'react';
import { createClient, isTesseraError, SESSION_ERROR_CODES, type TenantSession } from '@tessera/client';

const KEY = 'tessera.dashboard.session';

/** Tessera's address: the dashboard is served by Tessera's own front door. */
export const API_URL = window.location.origin;

/** The tenant's client (management calls carry its access token, refreshed on a 401). */
export const platform = createClient({ url: API_URL });

/** A session as kept: the tokens and when the access token expires (milliseconds since the epoch). */
type Stored = TenantSession & { expires_at?: number };

type Listener = () => void;
const listeners = new Set<Listener>();
let current: Stored | undefined = load();
/** Why the last session ended, shown on the sign-in page. */
let endedBecause: string | undefined;
let refreshTimer: ReturnType<typeof setTimeout> | undefined;

function load(): Stored | undefined {
  try {
    const raw = window.localStorage.getItem(KEY);
    return raw ? (JSON.parse(raw) as Stored) : undefined;
  } catch {
    return undefined;
  }
}

/** Makes `session` the current one (already stored, or stored now when `store`), and plans its refresh. */
function adopt(session: Stored | undefined, store: boolean): void {
  current = session;
  if (store)
    try {
      if (session) window.localStorage.setItem(KEY, JSON.stringify(session));
      else window.localStorage.removeItem(KEY);
    } catch {
      // storage refused (private mode): the session lives as long as the page
    }
  planRefresh();
  for (const l of listeners) l();
}

function save(session: TenantSession | undefined): void {
  const stored: Stored | undefined = session && {
    ...session,
    expires_at: (session as Stored).expires_at ?? Date.now() + session.expires_in * 1000,
  };
  adopt(stored, true);
}

/** Refreshes ahead of expiry: a minute before, or a third of the lifetime for short-lived tokens. */
function planRefresh(): void {
  clearTimeout(refreshTimer);
  const s = current;
  if (!s?.expires_at || !s.refresh_token) return;
  const lead = Math.min(60_000, (s.expires_in * 1000) / 3);
  refreshTimer = setTimeout(
    () => {
      if (current?.refresh_token !== s.refresh_token) return; // refreshed meanwhile
      platform.tenant.refresh().catch((err: unknown) => {
        if (isTesseraError(err) && SESSION_ERROR_CODES.has(err.code))
          endSession('Your session ended. Sign in again to continue.');
      });
    },
    Math.max(0, s.expires_at - lead - Date.now()),
  );
}

/** Runs `fn` holding the dashboard's refresh lock, shared by every tab of this origin (where the browser has one). */
async function withRefreshLock<T>(fn: () => Promise<T>): Promise<T> {
  const locks = (globalThis.navigator as Navigator | undefined)?.locks;
  return locks ? ((await locks.request('tessera.dashboard.refresh', fn)) as T) : await fn();
}

// One refresh at a time across tabs; a tab that finds the stored session already rotated past the token it holds
// takes that session instead (refreshing again would present a rotated token and end the session everywhere).
const refreshOnce = platform.tenant.refresh.bind(platform.tenant);
platform.tenant.refresh = (refreshToken?: string) =>
  withRefreshLock(async () => {
    const presented = refreshToken ?? current?.refresh_token;
    const stored = load();
    if (stored?.refresh_token && presented && stored.refresh_token !== presented) {
      adopt(stored, false);
      return stored;
    }
    return await refreshOnce(presented);
  });

// Another tab signed in, refreshed or signed out.
window.addEventListener('storage', (event) => {
  if (event.key !== KEY && event.key !== null) return;
  const stored = load();
  if (stored?.refresh_token !== current?.refresh_token) adopt(stored, false);
});

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

/**
 * Runs `fn`, which ends the session itself when it succeeds (deleting the account), with `reason` as why it ended;
 * the reason is forgotten when `fn` fails.
 */
export async function endingSession<T>(reason: string, fn: () => Promise<T>): Promise<T> {
  endedBecause = reason;
  try {
    return await fn();
  } catch (err) {
    endedBecause = undefined;
    throw err;
  }
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

// A session kept from an earlier visit is refreshed ahead of its expiry too.
planRefresh();
