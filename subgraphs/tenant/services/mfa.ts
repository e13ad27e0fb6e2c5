// The TOTP second factor of tenant accounts: the platform's TOTP service (platform/totp.ts: enrol, verify,
// disable, the sign-in check, replay protection) over the tenants table, wrong codes counted per account e-mail.
import { errors } from '../../../platform/errors.ts';
import type { FailureLimiter } from '../../../platform/rate-limit.ts';
import { createTotpService, totpEntityStore, type TotpService } from '../../../platform/totp.ts';
import { TenantEntity, type Tenant } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';

export type MfaService = TotpService<Tenant>;

/** Creates the MFA service; failed codes count in `limiter` under the account's key. */
export function createMfaService({
  db,
  box,
  limiter,
}: Pick<ServiceDeps, 'db' | 'box'> & { limiter: FailureLimiter }): MfaService {
  const key = (tenant: Tenant) => `account:${tenant.email}`;
  const stored = totpEntityStore<Tenant>(db, TenantEntity, () =>
    errors.unauthenticated('The account no longer exists'),
  );
  return createTotpService<Tenant>({
    box,
    store: { ...stored, check: (t) => limiter.check(key(t)), fail: (t) => limiter.fail(key(t)) },
  });
}
