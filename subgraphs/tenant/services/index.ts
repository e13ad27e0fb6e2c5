// Wires the tenant services together. Built once per running subgraph.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { createAccountService } from './accounts.ts';
import { createSecretBox } from '../../../platform/crypto.ts';
import { createMfaService } from './mfa.ts';
import { createOidcClientService } from './oidc-clients.ts';
import { createPlanService } from './plans.ts';
import { createProjectService } from './projects.ts';
import { createPublicationService } from './publications.ts';
import { createCorsService } from './cors.ts';
import { createFailureLimiter, createLimitSharing } from '../../../platform/rate-limit.ts';
import { publishBroadcast } from '../../../platform/broadcast.ts';
import { createSessionService } from './sessions.ts';
import { createSigningKeyService } from './signing-keys.ts';

/** Failed sign-ins and MFA codes allowed per account (and per address) in 15 minutes. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 50;
const WINDOW_MS = 15 * 60_000;

export type TenantServices = Awaited<ReturnType<typeof createTenantServices>>;

/** Builds every service of the tenant subgraph from the platform's dependencies. */
export async function createTenantServices({ config, db, logger, databaseUrl, router }: SubgraphDeps) {
  if (!config.internalSecret)
    throw errors.unavailable('TESSERA_INTERNAL_SECRET is not set: the tenant subgraph cannot seal secrets');
  const box = createSecretBox(config.internalSecret);
  // Failures counted by any tenant process count in every one (broadcast; checking stays a memory read).
  const limitSharing = createLimitSharing({
    url: databaseUrl,
    logger,
    publish: async (m) => await publishBroadcast(db.em(), 'rate-limits.changed', m),
  });
  const accountLimiter = createFailureLimiter({
    limit: SIGN_IN_FAILURES_PER_ACCOUNT,
    windowMs: WINDOW_MS,
    share: limitSharing.scope('tenant.signIn.account'),
  });
  const addressLimiter = createFailureLimiter({
    limit: SIGN_IN_FAILURES_PER_ADDRESS,
    windowMs: WINDOW_MS,
    share: limitSharing.scope('tenant.signIn.address'),
  });
  // One limiter interface over both: keys are `account:<email>` or `ip:<address>`.
  const limiter = {
    check: (key: string) => (key.startsWith('ip:') ? addressLimiter : accountLimiter).check(key),
    fail: (key: string) => (key.startsWith('ip:') ? addressLimiter : accountLimiter).fail(key),
    reset: (key: string) => (key.startsWith('ip:') ? addressLimiter : accountLimiter).reset(key),
  };

  // Sign-ups per client address and hour: every attempt counts (each costs an argon2 hash and says whether an address is taken).
  const signupLimiter = createFailureLimiter({
    limit: config.signupRateLimit,
    windowMs: 60 * 60_000,
    share: limitSharing.scope('tenant.signup.address'),
  });
  const plans = createPlanService({ db });
  const accounts = await createAccountService({ db, limiter, signupLimiter });
  const mfa = createMfaService({ db, box, limiter });
  const signingKeys = createSigningKeyService({ db, box, config });
  const sessions = createSessionService({ db, config, logger, accounts, mfa, signingKeys });
  const projects = createProjectService({ db, box, plans });
  const oidcClients = createOidcClientService({ db, box, logger, projects, databaseUrl });
  const publications = createPublicationService({ db, projects, router });
  const cors = createCorsService({ db, projects });
  return { plans, accounts, mfa, signingKeys, sessions, projects, oidcClients, publications, cors, limitSharing };
}
