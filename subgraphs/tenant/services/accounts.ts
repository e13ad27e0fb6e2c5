// Developer accounts: sign-up, password check, profile.
import crypto from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { AppError, errors } from '../../../platform/errors.ts';
import { TenantEntity, type Tenant } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { PlanService } from './plans.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../../platform/passwords.ts';
import type { FailureLimiter } from '../../../platform/rate-limit.ts';
import { checkName, checkPassword, normalizeEmail } from './validation.ts';

/** What the API shows of a tenant. */
export type TenantView = {
  id: string;
  email: string;
  name: string;
  mfaEnabled: boolean;
  planId: string;
  createdAt: Date;
};

export function toTenantView(t: Tenant): TenantView {
  return { id: t.id, email: t.email, name: t.name, mfaEnabled: t.mfaEnabled, planId: t.planId, createdAt: t.createdAt };
}

export type AccountService = Awaited<ReturnType<typeof createAccountService>>;

/** Creates the account service; `limiter` counts failed sign-ins per account and per address, `signupLimiter` sign-ups per address. */
export async function createAccountService({
  db,
  plans,
  limiter,
  signupLimiter,
}: Pick<ServiceDeps, 'db'> & { plans: PlanService; limiter: FailureLimiter; signupLimiter?: FailureLimiter }) {
  const dummyHash = await dummyPasswordHash();

  return {
    /** Creates an account on the default plan; EMAIL_TAKEN when the address is registered; RATE_LIMITED past the sign-ups of `ip`. */
    async signup(input: { email: unknown; password: unknown; name?: unknown }, ip?: string): Promise<TenantView> {
      const email = normalizeEmail(input.email);
      const password = checkPassword(input.password);
      const name =
        input.name === undefined || input.name === null
          ? email.split('@')[0].slice(0, 100)
          : checkName('name', input.name);
      if (signupLimiter && ip) {
        signupLimiter.check(`ip:${ip}`);
        signupLimiter.fail(`ip:${ip}`);
      }
      const em = db.em();
      if (await em.count(TenantEntity, { email })) throw new AppError('EMAIL_TAKEN');
      const now = new Date();
      const tenant = em.create(TenantEntity, {
        id: crypto.randomUUID(),
        email,
        name,
        passwordHash: await hashPassword(password),
        planId: await plans.defaultPlanId(),
        mfaEnabled: false,
        mfaSecret: null,
        mfaPendingSecret: null,
        mfaLastTimeStep: null,
        createdAt: now,
        updatedAt: now,
      });
      try {
        await em.flush();
      } catch (err) {
        // Two sign-ups with the same address racing: the unique index decides.
        if (err instanceof UniqueConstraintViolationException) throw new AppError('EMAIL_TAKEN');
        throw err;
      }
      return toTenantView(tenant);
    },

    /**
     * Returns the account whose e-mail and password match. Unknown address and wrong password fail
     * alike (same error, same argon2 work); repeated failures per account or address are RATE_LIMITED.
     */
    async verifyCredentials(emailInput: unknown, password: unknown, ip?: string): Promise<Tenant> {
      const email = typeof emailInput === 'string' ? emailInput.trim().toLowerCase() : '';
      const keys = [`account:${email}`, ...(ip ? [`ip:${ip}`] : [])];
      for (const key of keys) limiter.check(key);
      const tenant = email ? await db.em().findOne(TenantEntity, { email }) : null;
      const ok = await verifyPassword(tenant?.passwordHash ?? dummyHash, typeof password === 'string' ? password : '');
      if (!tenant || !ok) {
        for (const key of keys) limiter.fail(key);
        throw errors.invalidCredentials();
      }
      return tenant;
    },

    /** Forgets failed attempts after a complete sign-in. */
    signedIn(tenant: Tenant): void {
      limiter.reset(`account:${tenant.email}`);
    },

    /** The account, or null. */
    async get(id: string): Promise<TenantView | null> {
      const tenant = await db.em().findOne(TenantEntity, { id });
      return tenant ? toTenantView(tenant) : null;
    },
  };
}
