// The TOTP second factor of end-users: the platform's TOTP service (platform/totp.ts: enrol, verify, disable,
// the sign-in check, replay protection) over the end-users table, wrong codes counted per project and e-mail.
import { errors } from '../../../platform/errors.ts';
import { createTotpService, totpEntityStore, type TotpService } from '../../../platform/totp.ts';
import { EndUserEntity, type EndUser } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { Limiters } from './limits.ts';

export type MfaService = TotpService<EndUser>;

/** Creates the MFA service; failed codes count in the identity limiters under the project's account key. */
export function createMfaService({
  db,
  box,
  limiters,
}: Pick<ServiceDeps, 'db' | 'box'> & { limiters: Limiters }): MfaService {
  const keys = (user: EndUser) => [`account:${user.projectId}:${user.email}`];
  const stored = totpEntityStore<EndUser>(db, EndUserEntity, () => errors.invalidToken('The account no longer exists'));
  return createTotpService<EndUser>({
    box,
    store: { ...stored, check: (u) => limiters.mfa.check(keys(u)), fail: (u) => limiters.mfa.fail(keys(u)) },
  });
}
