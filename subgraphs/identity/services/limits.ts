// Rate limits of the identity provider, per account (project + e-mail) and per client address, counted in
// memory and shared with every other identity process (platform/rate-limit.ts, createLimitSharing). Sign-in counts failures; registration and reset requests
// count every attempt (they cost an argon2 hash or an e-mail each).
import { createFailureLimiter, type FailureLimiter, type LimitSharing } from '../../../platform/rate-limit.ts';

export const LIMITS = {
  /** Failed password checks (password grant, hosted sign-in page) per account / per address. */
  signIn: { account: 10, address: 50, windowMs: 15 * 60_000 },
  /** Registrations per e-mail / per address. */
  register: { account: 5, address: 30, windowMs: 15 * 60_000 },
  /** Password reset and verification mail requests per e-mail / per address. */
  mail: { account: 5, address: 30, windowMs: 15 * 60_000 },
  /**
   * Invitations (admin API) per invited address and per project (the second counter, keys `ip:project:<id>`): each
   * sends a mail through the platform's SMTP to an address the caller chose.
   */
  invite: { account: 3, address: 200, windowMs: 60 * 60_000 },
  /** Wrong TOTP codes per account. */
  mfa: { account: 10, address: 50, windowMs: 15 * 60_000 },
};

/** A pair of limiters; keys are `account:...` or `ip:...`. */
export type KeyedLimiter = {
  check: (keys: string[]) => void;
  fail: (keys: string[]) => void;
  reset: (keys: string[]) => void;
  /** Check, then count the attempt (for limits on every attempt). */
  hit: (keys: string[]) => void;
};

function pair(
  name: string,
  opts: { account: number; address: number; windowMs: number },
  sharing?: LimitSharing,
): KeyedLimiter {
  const account = createFailureLimiter({
    limit: opts.account,
    windowMs: opts.windowMs,
    share: sharing?.scope(`identity.${name}.account`),
  });
  const address = createFailureLimiter({
    limit: opts.address,
    windowMs: opts.windowMs,
    share: sharing?.scope(`identity.${name}.address`),
  });
  const of = (key: string): FailureLimiter => (key.startsWith('ip:') ? address : account);
  return {
    check: (keys) => keys.forEach((k) => of(k).check(k)),
    fail: (keys) => keys.forEach((k) => of(k).fail(k)),
    reset: (keys) => keys.forEach((k) => of(k).reset(k)),
    hit(keys) {
      keys.forEach((k) => of(k).check(k));
      keys.forEach((k) => of(k).fail(k));
    },
  };
}

export type Limiters = {
  signIn: KeyedLimiter;
  register: KeyedLimiter;
  mail: KeyedLimiter;
  mfa: KeyedLimiter;
  invite: KeyedLimiter;
};

/** The identity limiters; with `sharing`, counted together with every other identity process. */
export function createLimiters(sharing?: LimitSharing): Limiters {
  return {
    signIn: pair('signIn', LIMITS.signIn, sharing),
    register: pair('register', LIMITS.register, sharing),
    mail: pair('mail', LIMITS.mail, sharing),
    invite: pair('invite', LIMITS.invite, sharing),
    mfa: pair('mfa', LIMITS.mfa, sharing),
  };
}
