// Input rules of the identity domain. Each check names the field it refuses (VALIDATION_FAILED).
import { errors } from '../../../platform/errors.ts';
import { oauthError } from './oauth-errors.ts';
import { PROFILE_CLAIMS } from '../../../platform/oidc-claims.ts';

// Deliberately loose (RFC 5322 is not worth matching): one @, no spaces, a dot in the domain.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;
// RFC 6749 §3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
const SCOPE_TOKEN = /^[\x21\x23-\x5B\x5D-\x7E]+$/;

export const PASSWORD_MIN = 8;
export const PASSWORD_MAX = 1024;
export const EMAIL_MAX = 254;
const PROFILE_VALUE_MAX = 2048;

/** The standard OIDC profile claims an end-user may set (OIDC Core §5.1), by their REST/claim names. */
export { PROFILE_CLAIMS };
export type ProfileClaim = (typeof PROFILE_CLAIMS)[number];

/** An e-mail address, trimmed and lower-cased. */
export function normalizeEmail(value: unknown, field = 'email'): string {
  const email = typeof value === 'string' ? value.trim().toLowerCase() : '';
  if (email.length > EMAIL_MAX || !EMAIL.test(email)) throw errors.validation(field, 'must be a valid e-mail address');
  return email;
}

/** The password policy: 8 to 1024 characters, not the e-mail address, not a single repeated character. */
export function checkPassword(value: unknown, email: string, field = 'password'): string {
  const password = typeof value === 'string' ? value : '';
  if (password.length < PASSWORD_MIN) throw errors.validation(field, `must be at least ${PASSWORD_MIN} characters`);
  if (password.length > PASSWORD_MAX) throw errors.validation(field, `must be at most ${PASSWORD_MAX} characters`);
  if (password.trim().toLowerCase() === email) throw errors.validation(field, 'must not be the e-mail address');
  if (/^(.)\1*$/.test(password)) throw errors.validation(field, 'must not be one repeated character');
  return password;
}

const URL_CLAIMS = new Set(['picture', 'website']);

/** Profile claims from camelCase GraphQL input fields; unknown or malformed values are refused by name. */
export function checkProfile(input: Record<string, unknown>): Partial<Record<ProfileClaim, string>> {
  const out: Partial<Record<ProfileClaim, string>> = {};
  for (const claim of PROFILE_CLAIMS) {
    const key = claim.replace(/_([a-z])/g, (_, c: string) => c.toUpperCase());
    const value = input[key];
    if (value === undefined || value === null) continue;
    if (typeof value !== 'string') throw errors.validation(claim, 'must be a string');
    const v = value.trim();
    if (v.length === 0) continue;
    if (v.length > PROFILE_VALUE_MAX) throw errors.validation(claim, `must be at most ${PROFILE_VALUE_MAX} characters`);
    if (URL_CLAIMS.has(claim)) {
      let ok = false;
      try {
        ok = ['http:', 'https:'].includes(new URL(v).protocol);
      } catch {
        ok = false;
      }
      if (!ok) throw errors.validation(claim, 'must be an absolute http or https URL');
    }
    if (claim === 'birthdate' && !/^\d{4}(-\d{2}-\d{2})?$/.test(v))
      throw errors.validation(claim, 'must be YYYY-MM-DD or YYYY');
    out[claim] = v;
  }
  return out;
}

/** Splits and checks a space-separated scope parameter (RFC 6749 §3.3); duplicates are dropped. */
export function parseScope(value: unknown): string[] {
  if (value === undefined || value === null || value === '') return [];
  if (typeof value !== 'string') throw oauthError('invalid_scope', 'scope must be a space-separated string');
  const tokens = value.split(' ').filter((t) => t !== '');
  for (const t of tokens)
    if (!SCOPE_TOKEN.test(t) || t.length > 200)
      throw oauthError('invalid_scope', `scope "${t.slice(0, 50)}" is not a valid scope token`);
  if (tokens.length > 50) throw oauthError('invalid_scope', 'at most 50 scopes');
  return [...new Set(tokens)];
}
