// TOTP second factor: enrol (pending secret), verify (activates), disable, and the sign-in check.
// Each accepted code moves the account's last time step forward; a code at or before it is a replay.
import { generateSecret, generateURI, verify as verifyTotp } from 'otplib';
import { AppError, errors } from '../../../platform/errors.ts';
import { TenantEntity, type Tenant } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { FailureLimiter } from '../../../platform/rate-limit.ts';

const ISSUER = 'Tessera';
/** Accept the previous, current and next 30-second step (clock drift). */
const EPOCH_TOLERANCE_SECONDS = 30;
const CODE = /^\d{6}$/;

export type MfaService = ReturnType<typeof createMfaService>;

/** Creates the MFA service; failed codes count in `limiter` under the account's key. */
export function createMfaService({ db, box, limiter }: Pick<ServiceDeps, 'db' | 'box'> & { limiter: FailureLimiter }) {
  async function load(tenantId: string): Promise<Tenant> {
    const tenant = await db.em().findOne(TenantEntity, { id: tenantId });
    if (!tenant) throw errors.unauthenticated('The account no longer exists');
    return tenant;
  }

  /**
   * Checks `code` against the sealed `secret` and claims its time step for the account atomically,
   * so the same code cannot be used twice, even by two requests at once.
   */
  async function acceptCode(tenant: Tenant, sealedSecret: string, code: unknown, change: Partial<Pick<Tenant, 'mfaEnabled' | 'mfaSecret' | 'mfaPendingSecret'>> = {}): Promise<void> {
    const key = `account:${tenant.email}`;
    limiter.check(key);
    const token = typeof code === 'string' ? code.replace(/\s/g, '') : '';
    const result = CODE.test(token)
      ? await verifyTotp({ secret: box.decrypt(sealedSecret), token, epochTolerance: EPOCH_TOLERANCE_SECONDS, afterTimeStep: tenant.mfaLastTimeStep ?? undefined })
      : { valid: false as const };
    if (!result.valid || !('timeStep' in result)) {
      limiter.fail(key);
      throw errors.invalidMfaCode();
    }
    const step = result.timeStep;
    const claimed = await db.em().nativeUpdate(
      TenantEntity,
      { id: tenant.id, $or: [{ mfaLastTimeStep: null }, { mfaLastTimeStep: { $lt: step } }] },
      { ...change, mfaLastTimeStep: step, updatedAt: new Date() },
    );
    if (claimed !== 1) {
      limiter.fail(key);
      throw errors.invalidMfaCode();
    }
  }

  return {
    /** Starts (or restarts) enrolment: a new pending secret and its otpauth:// URL. */
    async enroll(tenantId: string): Promise<{ secret: string; otpauthUrl: string }> {
      const tenant = await load(tenantId);
      if (tenant.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      const secret = generateSecret();
      await db.em().nativeUpdate(TenantEntity, { id: tenant.id }, { mfaPendingSecret: box.encrypt(secret), updatedAt: new Date() });
      return { secret, otpauthUrl: generateURI({ issuer: ISSUER, label: tenant.email, secret }) };
    },

    /** Activates MFA with a code from the pending secret. */
    async verify(tenantId: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const tenant = await load(tenantId);
      if (tenant.mfaEnabled) throw new AppError('MFA_ALREADY_ENABLED');
      if (!tenant.mfaPendingSecret) throw new AppError('MFA_NOT_ENROLLED');
      await acceptCode(tenant, tenant.mfaPendingSecret, code, { mfaEnabled: true, mfaSecret: tenant.mfaPendingSecret, mfaPendingSecret: null });
      return { mfaEnabled: true };
    },

    /** Turns MFA off; needs a valid, unused code. */
    async disable(tenantId: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const tenant = await load(tenantId);
      if (!tenant.mfaEnabled || !tenant.mfaSecret) throw new AppError('MFA_NOT_ENABLED');
      await acceptCode(tenant, tenant.mfaSecret, code, { mfaEnabled: false, mfaSecret: null, mfaPendingSecret: null });
      return { mfaEnabled: false };
    },

    /** The second step of sign-in: MFA_REQUIRED without a code, INVALID_MFA_CODE for a wrong or used one. */
    async checkSignIn(tenant: Tenant, code: unknown): Promise<void> {
      if (!tenant.mfaEnabled || !tenant.mfaSecret) return;
      if (code === undefined || code === null || code === '') throw errors.mfaRequired();
      await acceptCode(tenant, tenant.mfaSecret, code);
    },
  };
}
