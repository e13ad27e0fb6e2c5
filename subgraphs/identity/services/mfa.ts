// TOTP second factor of end-users: enrol (pending secret), verify (activates), disable, and the
// sign-in check. Each accepted code moves the user's last time step forward in one conditional UPDATE;
// a code at or before it is a replay, even for two requests at once.
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib';
import { AppError, errors } from '../../../platform/errors.ts';
import { EndUserEntity, type EndUser } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { Limiters } from './limits.ts';

const ISSUER = 'Tessera';
const EPOCH_TOLERANCE_SECONDS = 30;
const CODE = /^\d{6}$/;

export type MfaService = ReturnType<typeof createMfaService>;

export function createMfaService({ db, box, limiters }: Pick<ServiceDeps, 'db' | 'box'> & { limiters: Limiters }) {
  async function load(userId: string): Promise<EndUser> {
    const user = await db.em().findOne(EndUserEntity, { id: userId });
    if (!user) throw errors.invalidToken('The account no longer exists');
    return user;
  }

  async function acceptCode(user: EndUser, sealedSecret: string, code: unknown, change: Partial<Pick<EndUser, 'mfaEnabled' | 'mfaSecret' | 'mfaPendingSecret'>> = {}): Promise<void> {
    const keys = [`account:${user.projectId}:${user.email}`];
    limiters.mfa.check(keys);
    const token = typeof code === 'string' ? code.replace(/\s/g, '') : '';
    const result = CODE.test(token)
      ? await verifyTotp({ secret: box.decrypt(sealedSecret), token, epochTolerance: EPOCH_TOLERANCE_SECONDS, afterTimeStep: user.mfaLastTimeStep ?? undefined })
      : { valid: false as const };
    if (!result.valid || !('timeStep' in result)) {
      limiters.mfa.fail(keys);
      throw errors.invalidMfaCode();
    }
    const claimed = await db.em().nativeUpdate(
      EndUserEntity,
      { id: user.id, $or: [{ mfaLastTimeStep: null }, { mfaLastTimeStep: { $lt: result.timeStep } }] },
      { ...change, mfaLastTimeStep: result.timeStep, updatedAt: new Date() },
    );
    if (claimed !== 1) {
      limiters.mfa.fail(keys);
      throw errors.invalidMfaCode();
    }
  }

  return {
    async enroll(userId: string): Promise<{ secret: string; otpauthUrl: string }> {
      const user = await load(userId);
      if (user.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      const secret = generateSecret();
      await db.em().nativeUpdate(EndUserEntity, { id: user.id }, { mfaPendingSecret: box.encrypt(secret), updatedAt: new Date() });
      return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: user.email, secret }) };
    },

    async verify(userId: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const user = await load(userId);
      if (user.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      if (!user.mfaPendingSecret) throw new AppError('MFA_NOT_ENROLLED');
      await acceptCode(user, user.mfaPendingSecret, code, { mfaEnabled: true, mfaSecret: user.mfaPendingSecret, mfaPendingSecret: null });
      return { mfaEnabled: true };
    },

    async disable(userId: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const user = await load(userId);
      if (!user.mfaEnabled || !user.mfaSecret) throw new AppError('MFA_NOT_ENABLED');
      await acceptCode(user, user.mfaSecret, code, { mfaEnabled: false, mfaSecret: null, mfaPendingSecret: null });
      return { mfaEnabled: false };
    },

    /** The second step of sign-in: MFA_REQUIRED without a code, INVALID_MFA_CODE for a wrong or used one. Returns whether a code was used. */
    async checkSignIn(user: EndUser, code: unknown): Promise<boolean> {
      if (!user.mfaEnabled || !user.mfaSecret) return false;
      if (code === undefined || code === null || code === '') throw errors.mfaRequired();
      await acceptCode(user, user.mfaSecret, code);
      return true;
    },
  };
}
