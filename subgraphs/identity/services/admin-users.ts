// The end-user admin API of a project (its secret API key, or a client token granted `admin:users`; the
// executor checks that, platform/admin-scopes.ts): add a user with a password or invite one by e-mail, list and
// search, read, set app metadata and roles, disable and enable, delete, end sessions, reset MFA. Users of other
// projects are NOT_FOUND, like unknown ones.
import { errors } from '../../../platform/errors.ts';
import { EndUserEntity, type EndUser } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import { toEndUserView, type EndUserView } from './users.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import type { Limiters } from './limits.ts';
import type { RecoveryService } from './recovery.ts';
import type { UserService } from './users.ts';
import { checkPassword, checkProfile, normalizeEmail } from './validation.ts';

const ROLE_NAME = /^[A-Za-z0-9_.:-]{1,64}$/;
export const ROLES_MAX = 50;
export const APP_METADATA_MAX_BYTES = 16 * 1024;
const SEARCH_MAX = 254;

/** Role names: 1 to 64 of letters, digits, `_ . : -`; at most 50, duplicates dropped. */
export function checkRoles(value: unknown): string[] {
  if (!Array.isArray(value)) throw errors.validation('roles', 'must be a list of role names');
  if (value.length > ROLES_MAX) throw errors.validation('roles', `must have at most ${ROLES_MAX} entries`);
  const out: string[] = [];
  for (const [i, r] of value.entries()) {
    if (typeof r !== 'string' || !ROLE_NAME.test(r))
      throw errors.validation(`roles[${i}]`, 'must be 1 to 64 letters, digits or _ . : -');
    if (!out.includes(r)) out.push(r);
  }
  return out;
}

/** App metadata: a JSON object of at most 16 KiB. */
export function checkAppMetadata(value: unknown): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value))
    throw errors.validation('app_metadata', 'must be a JSON object');
  if (Buffer.byteLength(JSON.stringify(value)) > APP_METADATA_MAX_BYTES)
    throw errors.validation('app_metadata', `must be at most ${APP_METADATA_MAX_BYTES} bytes of JSON`);
  return value as Record<string, unknown>;
}

export type AdminUserService = ReturnType<typeof createAdminUserService>;

/** A new user as the admin API gives it: `email`, profile claims (`name`, ...), `emailVerified`, and a password or not. */
export type AdminNewUser = Record<string, unknown> & { email?: unknown; password?: unknown; emailVerified?: unknown };

export function createAdminUserService({
  db,
  users,
  recovery,
  limiters,
}: Pick<ServiceDeps, 'db'> & { users: UserService; recovery: RecoveryService; limiters: Limiters }) {
  /** The user of the project, or NOT_FOUND (also for another project's user and for malformed ids). */
  async function owned(projectId: string, id: unknown): Promise<EndUser> {
    const user = isUuid(id) ? await db.em().findOne(EndUserEntity, { id, projectId }) : null;
    if (!user) throw errors.notFound('user', String(id).slice(0, 100));
    return user;
  }

  async function change(projectId: string, id: unknown, values: Partial<EndUser>): Promise<EndUserView> {
    const user = await owned(projectId, id);
    await db.em().nativeUpdate(EndUserEntity, { id: user.id, projectId }, { ...values, updatedAt: new Date() });
    return toEndUserView(await owned(projectId, user.id));
  }

  /** The e-mail, profile and verified flag of a new user (each refused by name). */
  function newUser(input: AdminNewUser) {
    const email = normalizeEmail(input.email);
    if (input.emailVerified !== undefined && input.emailVerified !== null && typeof input.emailVerified !== 'boolean')
      throw errors.validation('email_verified', 'must be true or false');
    return { email, profile: checkProfile(input), emailVerified: input.emailVerified === true };
  }

  return {
    /** Adds a user with a password (`email_verified` as the project says: it vouches for the address, or not). */
    async create(projectId: string, input: AdminNewUser): Promise<EndUserView> {
      const user = newUser(input);
      const password = checkPassword(input.password, user.email);
      return await users.insert(projectId, { ...user, password });
    },

    /**
     * Adds a user without a password and mails an invitation: a link to choose one (single use, 7 days), which also
     * confirms the address. Rate limited per invited address and per project (each sends a mail).
     */
    async invite(projectId: string, input: AdminNewUser): Promise<EndUserView> {
      const user = newUser(input);
      limiters.invite.hit([`account:${projectId}:${user.email}`, `ip:project:${projectId}`]);
      const made = await users.insert(projectId, { ...user, password: null });
      await recovery.sendInvitation(made);
      return made;
    },

    /**
     * Mails the invitation again (a new link; an earlier one keeps working until a password is chosen or it expires),
     * for a user whose link expired or got lost. Limited like invitations.
     */
    async resendInvitation(projectId: string, id: unknown): Promise<void> {
      const user = await owned(projectId, id);
      limiters.invite.hit([`account:${projectId}:${user.email}`, `ip:project:${projectId}`]);
      await recovery.sendInvitation(user);
    },

    /** One page of the project's users, newest first; `search` matches the e-mail or the name (case-insensitive). */
    async list(
      projectId: string,
      args: { search?: unknown; role?: unknown; disabled?: unknown; first?: unknown; after?: unknown },
    ): Promise<{ items: EndUserView[]; nextCursor: string | null }> {
      const first = args.first ?? 20;
      if (typeof first !== 'number' || !Number.isInteger(first) || first < 1 || first > 100)
        throw errors.validation('first', 'must be a whole number from 1 to 100');
      const where: string[] = ['project_id = ?'];
      const params: unknown[] = [projectId];
      if (args.search !== undefined && args.search !== null && args.search !== '') {
        if (typeof args.search !== 'string' || args.search.length > SEARCH_MAX)
          throw errors.validation('search', `must be a string of at most ${SEARCH_MAX} characters`);
        const pattern = `%${args.search.toLowerCase().replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
        where.push(`(email like ? or lower(profile->>'name') like ?)`);
        params.push(pattern, pattern);
      }
      if (args.role !== undefined && args.role !== null) {
        if (typeof args.role !== 'string' || !ROLE_NAME.test(args.role))
          throw errors.validation('role', 'must be a role name');
        where.push('roles @> array[?]::text[]');
        params.push(args.role);
      }
      if (args.disabled !== undefined && args.disabled !== null)
        where.push(args.disabled ? 'disabled_at is not null' : 'disabled_at is null');
      const c = decodeTimeCursor('after', args.after);
      if (c) {
        where.push('(created_at, id) < (?::timestamptz, ?::uuid)');
        params.push(c.createdAt, c.id);
      }
      params.push(first + 1);
      const em = db.em();
      const rows = await em.execute<Record<string, unknown>[]>(
        `select id, project_id, email, email_verified, profile, mfa_enabled, roles, app_metadata, disabled_at, created_at, updated_at
           from identity_users where ${where.join(' and ')} order by created_at desc, id desc limit ?`,
        params,
      );
      // The listed columns only (no password or MFA secret), made an entity by the ORM's own column mapping.
      return timePage(rows, first, (r) => toEndUserView(em.map(EndUserEntity, r)));
    },

    async get(projectId: string, id: unknown): Promise<EndUserView> {
      return toEndUserView(await owned(projectId, id));
    },

    /** Replaces app metadata and/or roles; a role taken away ends in every token of the user at once (tokens.ts). */
    async update(
      projectId: string,
      id: unknown,
      input: { appMetadata?: unknown; roles?: unknown },
    ): Promise<EndUserView> {
      const values: Partial<EndUser> = {};
      if (input.appMetadata !== undefined && input.appMetadata !== null)
        values.appMetadata = checkAppMetadata(input.appMetadata);
      if (input.roles !== undefined && input.roles !== null) values.roles = checkRoles(input.roles);
      if (Object.keys(values).length === 0) throw errors.validation('input', 'give app_metadata and/or roles');
      return await change(projectId, id, values);
    },

    /** Disables the account: sign-in is refused and every session ends now (their tokens with them). */
    async disable(projectId: string, id: unknown): Promise<EndUserView> {
      const user = await owned(projectId, id);
      await db.em().transactional(async (em) => {
        await em.execute(
          'update identity_users set disabled_at = coalesce(disabled_at, now()), updated_at = now() where id = ?',
          [user.id],
        );
        await em.execute(
          `update identity_sessions set revoked_at = now(), revoked_reason = 'user_disabled' where user_id = ? and revoked_at is null`,
          [user.id],
        );
      });
      return toEndUserView(await owned(projectId, user.id));
    },

    /** Lets a disabled user sign in again (ended sessions stay ended). */
    async enable(projectId: string, id: unknown): Promise<EndUserView> {
      return await change(projectId, id, { disabledAt: null });
    },

    /** Deletes the user with its sessions, codes and reset tokens; its tokens stop working at once. */
    async remove(projectId: string, id: unknown): Promise<void> {
      const user = await owned(projectId, id);
      const n = await db.em().nativeDelete(EndUserEntity, { id: user.id, projectId });
      if (n === 0) throw errors.notFound('user', user.id);
    },

    /** Ends every session of the user (access and refresh tokens stop working); answers how many. */
    async revokeSessions(projectId: string, id: unknown): Promise<number> {
      const user = await owned(projectId, id);
      const rows = await db
        .em()
        .execute<{ id: string }[]>(
          `update identity_sessions set revoked_at = now(), revoked_reason = 'admin' where user_id = ? and revoked_at is null returning id`,
          [user.id],
        );
      return rows.length;
    },

    /** Turns MFA off and forgets the secrets (the user enrolls again); sessions are left alone. */
    async resetMfa(projectId: string, id: unknown): Promise<EndUserView> {
      return await change(projectId, id, {
        mfaEnabled: false,
        mfaSecret: null,
        mfaPendingSecret: null,
        mfaLastTimeStep: null,
      });
    },
  };
}
