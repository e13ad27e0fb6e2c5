// Input rules of the tenant domain. Each check names the field it refuses (VALIDATION_FAILED).
import { errors } from '../../../platform/errors.ts';
import { ADMIN_SCOPE_NAMES, isAdminScope } from '../../../platform/admin-scopes.ts';

// Deliberately loose (RFC 5322 is not worth matching): one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
const SQL_IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

export const NAME_MAX = 100;
export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
export const EMAIL_MAX = 254;
export const IDENTIFIER_MAX = 63;
export const REDIRECT_URIS_MAX = 20;
export const ALLOWED_SCOPES_MAX = 100;
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]{1,200}$/;

/** A display name: trimmed, 1 to 100 characters. */
export function checkName(field: string, value: unknown): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (name.length === 0) throw errors.validation(field, 'must not be empty');
  if (name.length > NAME_MAX) throw errors.validation(field, `must be at most ${NAME_MAX} characters`);
  return name;
}

/** An e-mail address, trimmed and lower-cased. */
export function normalizeEmail(value: unknown): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (email.length > EMAIL_MAX || !EMAIL.test(email))
    throw errors.validation('email', 'must be a valid e-mail address');
  return email;
}

/** A new password: 8 to 1024 characters. */
export function checkPassword(value: unknown, field = 'password'): string {
  const password = typeof value === 'string' ? value : '';
  if (password.length < PASSWORD_MIN) throw errors.validation(field, `must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw errors.validation(field, `must be at most ${PASSWORD_MAX} characters`);
  return password;
}

/** A plain (unqualified) SQL table name: letters, digits and `_`, not starting with a digit, at most 63 characters. */
export function checkTableName(field: string, value: unknown): string {
  const name = typeof value === 'string' ? value : '';
  if (name.length === 0 || name.length > IDENTIFIER_MAX || !SQL_IDENTIFIER.test(name)) {
    throw errors.validation(
      field,
      `must be a plain SQL identifier (letters, digits, _; at most ${IDENTIFIER_MAX} characters; no schema)`,
    );
  }
  return name;
}

/** OAuth redirect URIs: absolute http(s) URLs without a fragment, no duplicates. */
export function checkRedirectUris(field: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw errors.validation(field, 'must be a list of URLs');
  if (value.length > REDIRECT_URIS_MAX)
    throw errors.validation(field, `must have at most ${REDIRECT_URIS_MAX} entries`);
  const out: string[] = [];
  for (const [i, raw] of value.entries()) {
    const uri = typeof raw === 'string' ? raw.trim() : '';
    let parsed: URL | undefined;
    try {
      parsed = new URL(uri);
    } catch {
      parsed = undefined;
    }
    if (!parsed || (parsed.protocol !== 'http:' && parsed.protocol !== 'https:')) {
      throw errors.validation(`${field}[${i}]`, 'must be an absolute http or https URL');
    }
    if (uri.includes('#')) throw errors.validation(`${field}[${i}]`, 'must not contain a fragment');
    if (parsed.username || parsed.password) throw errors.validation(`${field}[${i}]`, 'must not contain credentials');
    if (!out.includes(uri)) out.push(uri);
  }
  return out;
}

/**
 * The scopes an OIDC client may be issued: RFC 6749 scope tokens, no duplicates. `role:*` lets it carry role scopes
 * (each still only for a role the project assigned to the end-user), `role:<name>` one role; admin scopes must be
 * known ones (`admin`, `admin:sql`, ...: platform/admin-scopes.ts).
 */
export function checkAllowedScopes(field: string, value: unknown): string[] {
  if (!Array.isArray(value)) throw errors.validation(field, 'must be a list of scopes');
  if (value.length > ALLOWED_SCOPES_MAX)
    throw errors.validation(field, `must have at most ${ALLOWED_SCOPES_MAX} entries`);
  const out: string[] = [];
  for (const [i, raw] of value.entries()) {
    const scope = typeof raw === 'string' ? raw.trim() : '';
    if (!SCOPE_TOKEN.test(scope))
      throw errors.validation(
        `${field}[${i}]`,
        'must be a scope token (1 to 200 visible ASCII characters, no space, quote or backslash)',
      );
    if (isAdminScope(scope) && !ADMIN_SCOPE_NAMES.includes(scope))
      throw errors.validation(
        `${field}[${i}]`,
        `is not an admin scope; admin scopes are ${ADMIN_SCOPE_NAMES.join(', ')}`,
      );
    if (scope.startsWith('role:') && scope.length === 5)
      throw errors.validation(`${field}[${i}]`, 'must name a role (role:<name>) or all roles (role:*)');
    if (!out.includes(scope)) out.push(scope);
  }
  return out;
}

/** A page size: 1 to `max`, `fallback` when absent. */
export function checkPageSize(field: string, value: unknown, fallback: number, max: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1 || value > max) {
    throw errors.validation(field, `must be a whole number from 1 to ${max}`);
  }
  return value;
}
