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
import { createRequestLogService } from './request-log.ts';
import { createBrandingService } from './branding.ts';
import { createOperatorService } from './operator.ts';
import { createOperatorPlanService } from './operator-plans.ts';
import { createOperatorKeyService } from './operator-keys.ts';
import { createOperatorAuditService } from './operator-audit.ts';
import { createFailureLimiter, createLimitSharing } from '../../../platform/rate-limit.ts';
import { publishBroadcast } from '../../../platform/broadcast.ts';
import { createSessionService } from './sessions.ts';
import { createSigningKeyService } from './signing-keys.ts';
import { createAccountLifecycleService, type AccountMailKind } from './account-lifecycle.ts';
import { createMailQueue } from '../../../platform/mail.ts';
import { schedulerOf } from '../../../platform/jobs.ts';
import { TENANT_MAIL_JOB } from '../jobs/send-mail.ts';

/** Failed sign-ins and MFA codes allowed per account (and per address) in 15 minutes. */
export const SIGN_IN_FAILURES_PER_ACCOUNT = 10;
export const SIGN_IN_FAILURES_PER_ADDRESS = 50;
const WINDOW_MS = 15 * 60_000;
/** Password-reset and e-mail-change mails per address (and per client address) in 15 minutes: the end-users' limits. */
export const ACCOUNT_MAILS_PER_ACCOUNT = 5;
export const ACCOUNT_MAILS_PER_ADDRESS = 30;

export type TenantServices = Awaited<ReturnType<typeof createTenantServices>>;

/** Builds every service of the tenant subgraph from the platform's dependencies. */
export async function createTenantServices(deps: SubgraphDeps) {
  const { config, db, logger, databaseUrl, router } = deps;
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
  // Reset and e-mail-change mails: every request counts (each may send a mail).
  const mailAccountLimiter = createFailureLimiter({
    limit: ACCOUNT_MAILS_PER_ACCOUNT,
    windowMs: WINDOW_MS,
    share: limitSharing.scope('tenant.mail.account'),
  });
  const mailAddressLimiter = createFailureLimiter({
    limit: ACCOUNT_MAILS_PER_ADDRESS,
    windowMs: WINDOW_MS,
    share: limitSharing.scope('tenant.mail.address'),
  });
  const mailLimiter = {
    check: (key: string) => (key.startsWith('ip:') ? mailAddressLimiter : mailAccountLimiter).check(key),
    fail: (key: string) => (key.startsWith('ip:') ? mailAddressLimiter : mailAccountLimiter).fail(key),
  };
  const mail = createMailQueue<AccountMailKind>({
    config,
    logger,
    box: createSecretBox(config.internalSecret, 'tenant:mail'),
    // Read when the first mail is queued: a second services instance in tests has none and sends no mail.
    scheduler: () => schedulerOf(deps, 'tenant'),
    job: TENANT_MAIL_JOB,
  });
  const plans = createPlanService({ db, config, logger, databaseUrl });
  const accounts = await createAccountService({ db, plans, limiter, signupLimiter });
  const mfa = createMfaService({ db, box, limiter });
  const signingKeys = createSigningKeyService({ db, box, config });
  const projects = createProjectService({ db, box, plans });
  const oidcClients = createOidcClientService({ db, box, logger, projects, databaseUrl });
  const publications = createPublicationService({ db, projects, router });
  const cors = createCorsService({ db, projects });
  const lifecycle = createAccountLifecycleService({
    db,
    config,
    logger,
    mfa,
    projects,
    mail,
    signInLimiter: limiter,
    mailLimiter,
  });
  const sessions = createSessionService({ db, config, logger, accounts, mfa, signingKeys, lifecycle });
  const requestLog = createRequestLogService({ db });
  const branding = createBrandingService({ db, projects });
  // The install's operator (the admin API): plans, tenants, projects, suspension, audit, operator keys.
  const operator = createOperatorService({ db, plans });
  const operatorPlans = createOperatorPlanService({ db, plans });
  const operatorKeys = createOperatorKeyService({ db, config });
  const operatorAudit = createOperatorAuditService({ db });
  return {
    operator,
    operatorPlans,
    operatorKeys,
    operatorAudit,
    plans,
    accounts,
    mfa,
    signingKeys,
    sessions,
    projects,
    oidcClients,
    publications,
    cors,
    mail,
    lifecycle,
    requestLog,
    branding,
    limitSharing,
  };
}
