// The TOTP second factor (RFC 6238, through otplib) of any kind of account: tenants (the tenant subgraph) and
// end-users (identity) both use this one. Enrol stores a pending secret, verify activates it with a first code,
// disable needs a code, and the sign-in check needs one when MFA is on. Secrets are stored sealed (SecretBox).
// Replay protection: each accepted code moves the account's last used time step forward in one conditional
// UPDATE (the store's `claim`); a code at or before it is refused, even for two requests at once. Wrong codes
// count against the account in the caller's rate limiter (RATE_LIMITED past its limit).
import type { EntityData, EntityName, FilterQuery } from '@mikro-orm/core';
import { generateSecret, generateURI, verify } from 'otplib';
import type { SecretBox } from './crypto.ts';
import type { SubgraphDatabase } from './database.ts';
import { AppError, errors } from './errors.ts';

const ISSUER = 'Tessera';
/** Accept the previous, current and next 30-second step (clock drift). */
const EPOCH_TOLERANCE_SECONDS = 30;
const CODE = /^\d{6}$/;

/** What the TOTP service reads of an account (the columns tenants and end-users share). */
export type TotpAccount = {
  /** The otpauth:// label (the account's e-mail address). */
  email: string;
  mfaEnabled: boolean;
  mfaSecret?: string | null;
  mfaPendingSecret?: string | null;
  mfaLastTimeStep?: number | null;
};

/** What an accepted code changes besides the last time step. */
export type TotpChange = { mfaEnabled?: boolean; mfaSecret?: string | null; mfaPendingSecret?: string | null };

/** Where a kind of account lives, and who counts its wrong codes. */
export type TotpStore<A extends TotpAccount> = {
  /** The account; throws (the caller's 401) when it no longer exists. */
  load: (id: string) => Promise<A>;
  /** Stores a new sealed pending secret. */
  setPending: (account: A, sealedSecret: string) => Promise<void>;
  /**
   * Sets the last time step to `step` and applies `change` only when the stored step is null or lower, in one
   * statement; answers whether it did (false: the code, or a later one, was used meanwhile).
   */
  claim: (account: A, step: number, change: TotpChange) => Promise<boolean>;
  /** Throws RATE_LIMITED when the account has failed too often. */
  check: (account: A) => void;
  /** Counts one wrong code for the account. */
  fail: (account: A) => void;
};

/**
 * The storing part of a TotpStore over an entity with the TOTP columns (id, email, mfaEnabled, mfaSecret,
 * mfaPendingSecret, mfaLastTimeStep, updatedAt); `gone` is the error for an account that no longer exists.
 */
export function totpEntityStore<A extends TotpAccount & { id: string }>(
  db: SubgraphDatabase,
  entity: EntityName<A>,
  gone: () => Error,
): Pick<TotpStore<A>, 'load' | 'setPending' | 'claim'> {
  return {
    async load(id) {
      const account = await db.em().findOne(entity, { id } as FilterQuery<A>);
      if (!account) throw gone();
      return account as A;
    },
    async setPending(account, sealedSecret) {
      await db
        .em()
        .nativeUpdate(
          entity,
          { id: account.id } as FilterQuery<A>,
          { mfaPendingSecret: sealedSecret, updatedAt: new Date() } as unknown as EntityData<A>,
        );
    },
    async claim(account, step, change) {
      const claimed = await db.em().nativeUpdate(
        entity,
        {
          id: account.id,
          $or: [{ mfaLastTimeStep: null }, { mfaLastTimeStep: { $lt: step } }],
        } as unknown as FilterQuery<A>,
        { ...change, mfaLastTimeStep: step, updatedAt: new Date() } as EntityData<A>,
      );
      return claimed === 1;
    },
  };
}

export type TotpService<A extends TotpAccount> = ReturnType<typeof createTotpService<A>>;

/** The TOTP second factor over one kind of account. */
export function createTotpService<A extends TotpAccount>({ box, store }: { box: SecretBox; store: TotpStore<A> }) {
  /** Checks `code` against the sealed secret and claims its time step for the account; INVALID_MFA_CODE otherwise. */
  async function acceptCode(account: A, sealedSecret: string, code: unknown, change: TotpChange = {}): Promise<void> {
    store.check(account);
    const token = typeof code === 'string' ? code.replace(/\s/g, '') : '';
    const result = CODE.test(token)
      ? await verify({
          secret: box.decrypt(sealedSecret),
          token,
          epochTolerance: EPOCH_TOLERANCE_SECONDS,
          afterTimeStep: account.mfaLastTimeStep ?? undefined,
        })
      : { valid: false as const };
    if (!result.valid || !('timeStep' in result) || !(await store.claim(account, result.timeStep, change))) {
      store.fail(account);
      throw errors.invalidMfaCode();
    }
  }

  return {
    /** Starts (or restarts) enrolment: a new pending secret and its otpauth:// URL. */
    async enroll(id: string): Promise<{ secret: string; otpauthUrl: string }> {
      const account = await store.load(id);
      if (account.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      const secret = generateSecret();
      await store.setPending(account, box.encrypt(secret));
      return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: account.email, secret }) };
    },

    /** Activates MFA with a code from the pending secret. */
    async verify(id: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const account = await store.load(id);
      if (account.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      if (!account.mfaPendingSecret) throw new AppError('MFA_NOT_ENROLLED');
      await acceptCode(account, account.mfaPendingSecret, code, {
        mfaEnabled: true,
        mfaSecret: account.mfaPendingSecret,
        mfaPendingSecret: null,
      });
      return { mfaEnabled: true };
    },

    /** Turns MFA off; needs a valid, unused code. */
    async disable(id: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const account = await store.load(id);
      if (!account.mfaEnabled || !account.mfaSecret) throw new AppError('MFA_NOT_ENABLED');
      await acceptCode(account, account.mfaSecret, code, {
        mfaEnabled: false,
        mfaSecret: null,
        mfaPendingSecret: null,
      });
      return { mfaEnabled: false };
    },

    /** The second step of sign-in: MFA_REQUIRED without a code, INVALID_MFA_CODE for a wrong or used one. Returns whether a code was used. */
    async checkSignIn(account: A, code: unknown): Promise<boolean> {
      if (!account.mfaEnabled || !account.mfaSecret) return false;
      if (code === undefined || code === null || code === '') throw errors.mfaRequired();
      await acceptCode(account, account.mfaSecret, code);
      return true;
    },
  };
}
