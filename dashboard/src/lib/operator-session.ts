// The operator's sign-in in the console: an operator key pasted on /operator, kept in this tab's sessionStorage only
// (gone when the tab closes; never in localStorage, never next to the tenant's session) and cleared by "Sign out".
import { useSyncExternalStore } from 'react';
import { createOperatorClient, type OperatorAdmin } from '@tessera/client';
import { API_URL } from './session.ts';

const KEY = 'tessera.dashboard.operator-key';

type Listener = () => void;
const listeners = new Set<Listener>();
let current: string | undefined = load();
let client: { key: string; admin: OperatorAdmin } | undefined;
/** The errors the operator's client threw: they are about the operator key, never about the tenant's session. */
const operatorErrors = new WeakSet<object>();

function load(): string | undefined {
  try {
    return window.sessionStorage.getItem(KEY) ?? undefined;
  } catch {
    return undefined;
  }
}

/** Keeps `key` as the operator's credential for this tab (undefined: signs out). */
export function setOperatorKey(key: string | undefined): void {
  current = key;
  try {
    if (key) window.sessionStorage.setItem(KEY, key);
    else window.sessionStorage.removeItem(KEY);
  } catch {
    // storage refused: the key lives as long as the page
  }
  for (const l of listeners) l();
}

/** The admin API with `key` (by default the signed-in operator's). */
export function operatorApi(key = current): OperatorAdmin {
  if (!key) throw new Error('Not signed in as the operator');
  if (client?.key !== key) {
    const c = createOperatorClient({ url: API_URL, operatorKey: key });
    const call = c.http.call.bind(c.http);
    c.http.call = (async (...args: Parameters<typeof call>) => {
      try {
        return await call(...args);
      } catch (err) {
        if (typeof err === 'object' && err !== null) operatorErrors.add(err);
        throw err;
      }
    }) as typeof c.http.call;
    client = { key, admin: c.admin };
  }
  return client.admin;
}

/**
 * Whether `err` came from the operator's client. A 401 there is about the operator key (wrong, revoked): it must
 * not end the tenant's session; when it is the key in use, the operator is signed out.
 */
export function isOperatorError(err: unknown): boolean {
  if (typeof err !== 'object' || err === null || !operatorErrors.has(err)) return false;
  if ((err as { status?: number }).status === 401 && current && client?.key === current) setOperatorKey(undefined);
  return true;
}

/** The operator key of this tab (re-renders when it changes). */
export function useOperatorKey(): string | undefined {
  return useSyncExternalStore(
    (l) => {
      listeners.add(l);
      return () => listeners.delete(l);
    },
    () => current,
  );
}
