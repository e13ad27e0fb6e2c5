// End-users of a project: registration, the password check of sign-in, profile and claims.
import crypto from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { AppError, errors } from '../../../platform/errors.ts';
import { publishEventIfWanted } from '../../../platform/events.ts';
import { dummyPasswordHash, hashPassword, verifyPassword } from '../../../platform/passwords.ts';
import { EndUserEntity, type EndUser } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { Limiters } from './limits.ts';
import { checkPassword, checkProfile, normalizeEmail, PROFILE_CLAIMS } from './validation.ts';
import { isUuid } from '../../../platform/ids.ts';

/** What the API shows of an end-user. */
export type EndUserView = {
  id: string;
  projectId: string;
  email: string;
  emailVerified: boolean;
  profile: Record<string, string>;
  mfaEnabled: boolean;
  roles: string[];
  appMetadata: Record<string, unknown>;
  disabledAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
};

export function toEndUserView(u: EndUser): EndUserView {
  return {
    id: u.id,
    projectId: u.projectId,
    email: u.email,
    emailVerified: u.emailVerified,
    profile: u.profile ?? {},
    mfaEnabled: u.mfaEnabled,
    roles: u.roles ?? [],
    appMetadata: u.appMetadata ?? {},
    disabledAt: u.disabledAt ?? null,
    createdAt: u.createdAt,
    updatedAt: u.updatedAt,
  };
}

/** OIDC claims of a user for the granted scopes (userinfo, id_token). */
export function claimsOf(u: EndUserView, scopes: string[]): Record<string, unknown> {
  const claims: Record<string, unknown> = { sub: u.id };
  if (scopes.includes('profile')) {
    for (const c of PROFILE_CLAIMS) if (c !== 'phone_number' && u.profile[c]) claims[c] = u.profile[c];
    claims.updated_at = Math.floor(u.updatedAt.getTime() / 1000);
  }
  if (scopes.includes('email')) {
    claims.email = u.email;
    claims.email_verified = u.emailVerified;
  }
  if (scopes.includes('phone') && u.profile.phone_number) claims.phone_number = u.profile.phone_number;
  return claims;
}

export type UserService = Awaited<ReturnType<typeof createUserService>>;

/** Creates the end-user service. */
export async function createUserService({ db, limiters }: Pick<ServiceDeps, 'db'> & { limiters: Limiters }) {
  const dummyHash = await dummyPasswordHash();

  /**
   * Stores a new end-user (the input checked by the caller); EMAIL_TAKEN when the address is registered. Without a
   * password (an invitation) the account gets a random one nobody knows: it signs in once a password is chosen.
   */
  async function insert(
    projectId: string,
    input: { email: string; password: string | null; profile: Record<string, string>; emailVerified: boolean },
  ): Promise<EndUserView> {
    const { email, profile, emailVerified } = input;
    if (await db.em().count(EndUserEntity, { projectId, email })) throw new AppError('EMAIL_TAKEN');
    const now = new Date();
    const passwordHash = await hashPassword(input.password ?? crypto.randomBytes(32).toString('base64url'));
    try {
      const user = await db.em().transactional(async (em) => {
        const made = em.create(EndUserEntity, {
          id: crypto.randomUUID(),
          projectId,
          email,
          emailVerified,
          passwordHash,
          profile,
          mfaEnabled: false,
          mfaSecret: null,
          mfaPendingSecret: null,
          mfaLastTimeStep: null,
          roles: [],
          appMetadata: {},
          disabledAt: null,
          createdAt: now,
          updatedAt: now,
        });
        await em.flush();
        // For the project's outbound event subscriptions (user.registered), when it has any: committed with the user.
        await publishEventIfWanted(em, 'identity.user.registered', {
          projectId,
          userId: made.id,
          email,
          emailVerified,
          createdAt: now.toISOString(),
        });
        return made;
      });
      return toEndUserView(user);
    } catch (err) {
      if (err instanceof UniqueConstraintViolationException) throw new AppError('EMAIL_TAKEN');
      throw err;
    }
  }

  return {
    /** Registers an end-user of `projectId`; EMAIL_TAKEN (409, nothing more) when the address is registered. */
    async register(projectId: string, input: Record<string, unknown>, ip?: string): Promise<EndUserView> {
      const email = normalizeEmail(input.email);
      limiters.register.hit([`account:${projectId}:${email}`, ...(ip ? [`ip:${ip}`] : [])]);
      const password = checkPassword(input.password, email);
      const profile = checkProfile(input);
      return await insert(projectId, { email, password, profile, emailVerified: false });
    },

    insert,

    /**
     * The user of `projectId` whose e-mail and password match. Unknown address and wrong password fail
     * alike (same error, same argon2 work); repeated failures per account or address are RATE_LIMITED.
     */
    async verifyCredentials(projectId: string, emailInput: unknown, password: unknown, ip?: string): Promise<EndUser> {
      const email = typeof emailInput === 'string' ? emailInput.trim().toLowerCase() : '';
      const keys = [`account:${projectId}:${email}`, ...(ip ? [`ip:${ip}`] : [])];
      limiters.signIn.check(keys);
      const user = email ? await db.em().findOne(EndUserEntity, { projectId, email }) : null;
      const ok = await verifyPassword(user?.passwordHash ?? dummyHash, typeof password === 'string' ? password : '');
      if (!user || !ok) {
        limiters.signIn.fail(keys);
        throw errors.invalidCredentials();
      }
      // Said only to whoever knows the password.
      if (user.disabledAt)
        throw new AppError('FORBIDDEN', 'This account is disabled', {
          oauth_error: 'invalid_grant',
          reason: 'account_disabled',
        });
      return user;
    },

    /** Forgets failed attempts after a complete sign-in. */
    signedIn(user: EndUser): void {
      limiters.signIn.reset([`account:${user.projectId}:${user.email}`]);
    },

    async load(id: string): Promise<EndUser | null> {
      if (!isUuid(id)) return null;
      return await db.em().findOne(EndUserEntity, { id });
    },

    async findByEmail(projectId: string, email: string): Promise<EndUser | null> {
      return await db.em().findOne(EndUserEntity, { projectId, email });
    },

    /** The user behind a verified principal; INVALID_TOKEN when the account is gone. */
    async get(id: string): Promise<EndUserView> {
      const user = isUuid(id) ? await db.em().findOne(EndUserEntity, { id }) : null;
      if (!user) throw errors.invalidToken('The account no longer exists');
      return toEndUserView(user);
    },

    /**
     * Replaces the password hash (the caller has checked the old password or a reset token). Every outstanding
     * reset token of the user ends with it: one used, or a password changed, leaves no other that still works.
     */
    async setPassword(user: EndUser, password: unknown, field: string): Promise<void> {
      const checked = checkPassword(password, user.email, field);
      const hash = await hashPassword(checked);
      await db.em().transactional(async (em) => {
        await em.nativeUpdate(EndUserEntity, { id: user.id }, { passwordHash: hash, updatedAt: new Date() });
        await em.execute(
          `update identity_user_tokens set used_at = now() where user_id = ? and purpose = 'password_reset' and used_at is null`,
          [user.id],
        );
      });
    },

    async checkPassword(user: EndUser, password: unknown): Promise<boolean> {
      return await verifyPassword(user.passwordHash, typeof password === 'string' ? password : '');
    },
  };
}
