// Scopes are granted, never taken. What a token may carry is decided here, for every grant:
// - each scope must be on the client's allowed list (kept by the tenant; `role:*` allows any role scope);
// - `role:<name>` only for a role the project assigned to the end-user (admin API), and never without a user;
// - admin scopes (`admin`, `admin:<area>`, platform/admin-scopes.ts) only with client_credentials;
// anything else asked for is refused with RFC 6749 `invalid_scope`, never silently dropped. The roles are
// checked again on every use of a token (tokens.ts), so a role taken away ends at once.
import { isAdminScope } from '../../../platform/admin-scopes.ts';
import type { ClientFacts } from './context.ts';
import { oauthError } from './oauth-errors.ts';

/** Scopes a user grant gets when it asks for none (those the client may be issued). */
export const DEFAULT_USER_SCOPES = ['openid', 'profile', 'email'];
/** Scopes that only make sense with an end-user. */
const USER_ONLY_SCOPES = ['openid', 'offline_access', 'profile', 'email', 'phone'];

const ROLE = 'role:';

/** The role a scope names, if it is a role scope. */
export function roleOfScope(scope: string): string | undefined {
  return scope.startsWith(ROLE) ? scope.slice(ROLE.length) : undefined;
}

function clientAllows(client: ClientFacts, scope: string): boolean {
  if (client.allowedScopes.includes(scope)) return true;
  return roleOfScope(scope) !== undefined && client.allowedScopes.includes('role:*');
}

const notAllowed = (scope: string) =>
  oauthError('invalid_scope', `scope "${scope.slice(0, 100)}" is not allowed for this client`);

/**
 * The scopes of an end-user grant (password, authorization code): those asked for, or the client's share
 * of the defaults. `roles` are the user's roles; null checks everything but them (the user is not known yet).
 */
export function userScopes(client: ClientFacts, requested: string[], roles: readonly string[] | null): string[] {
  if (requested.length === 0) return DEFAULT_USER_SCOPES.filter((s) => clientAllows(client, s));
  for (const s of requested) {
    if (isAdminScope(s))
      throw oauthError(
        'invalid_scope',
        `scope "${s}" is an admin scope: admin scopes are issued only with client_credentials`,
      );
    if (!clientAllows(client, s)) throw notAllowed(s);
    const role = roleOfScope(s);
    if (role !== undefined && roles !== null && !roles.includes(role))
      throw oauthError(
        'invalid_scope',
        `scope "${s.slice(0, 100)}": the role "${role.slice(0, 64)}" is not assigned to this user`,
      );
  }
  return requested;
}

/** The scopes of a client_credentials token: exactly those asked for, each allowed to the client and none needing a user. */
export function clientScopes(client: ClientFacts, requested: string[]): string[] {
  for (const s of requested) {
    if (USER_ONLY_SCOPES.includes(s) || roleOfScope(s) !== undefined)
      throw oauthError('invalid_scope', `scope "${s.slice(0, 100)}" needs an end-user; client_credentials has none`);
    if (!clientAllows(client, s)) throw notAllowed(s);
  }
  return requested;
}

/**
 * The scopes of a token for an existing grant (refresh, code redemption): those asked for (at most the
 * granted ones), or the granted ones, less whatever the client may no longer be issued or the user no longer
 * holds (RFC 6749 §3.3: the answer's `scope` then says what was issued).
 */
export function refreshedScopes(
  client: ClientFacts,
  granted: readonly string[],
  requested: string[],
  roles: readonly string[],
): string[] {
  const extra = requested.find((s) => !granted.includes(s));
  if (extra) throw oauthError('invalid_scope', `scope "${extra.slice(0, 100)}" was not granted to this refresh token`);
  const still = (s: string) =>
    !isAdminScope(s) && clientAllows(client, s) && (roleOfScope(s) === undefined || roles.includes(roleOfScope(s)!));
  return (requested.length > 0 ? requested : granted).filter(still);
}
