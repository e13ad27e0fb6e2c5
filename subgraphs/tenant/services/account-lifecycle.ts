// What a developer does with an account once it exists: recover it (forgot password by mail, MFA recovery codes),
// change its password and e-mail address, see and end its sessions, and delete it.
// - Mailed tokens (password reset, e-mail change) are random, stored as SHA-256 hashes, single use (one
//   conditional UPDATE claims them) and expiring; a reset request answers the same whether the address is known or
//   not, and counts every attempt per address and per client address (like the end-users' requests).
// - Recovery codes: ten per enrolment, shown once, stored as HMAC-SHA-256 under a key derived from the internal
//   secret (a stolen database alone cannot test guesses), each usable once in place of a TOTP code.
// - Sensitive changes (password, e-mail, regenerating codes, deleting the account) ask again: the current password
//   or a fresh TOTP code; wrong answers count in the sign-in limiter of the account.
import crypto from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/postgresql';
import { AppError, errors } from '../../../platform/errors.ts';
import { deriveKey, randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { hashPassword, verifyPassword } from '../../../platform/passwords.ts';
import type { FailureLimiter } from '../../../platform/rate-limit.ts';
import type { MailQueue } from '../../../platform/mail.ts';
import { isUuid } from '../../../platform/ids.ts';
import { TenantEntity, TenantSessionEntity, type Tenant } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import { toTenantView, type TenantView } from './accounts.ts';
import type { MfaService } from './mfa.ts';
import type { ProjectService } from './projects.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';
import { checkPassword, normalizeEmail } from './validation.ts';

const RESET_PREFIX = 'tar_';
const EMAIL_PREFIX = 'tae_';
/** A reset link works for an hour, an e-mail confirmation for a day. */
export const RESET_TTL_MS = 60 * 60_000;
export const EMAIL_CHANGE_TTL_MS = 24 * 60 * 60_000;
/** Recovery codes per enrolment (GitHub and Google give ten as well). */
export const RECOVERY_CODE_COUNT = 10;
// Ten characters of an alphabet without look-alikes (no 0/o, 1/l/i): 10 × log2(32) = 50 bits per code.
const CODE_ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const CODE_SHAPE = /^[a-z2-9]{5}-?[a-z2-9]{5}$/;
const TOKEN_GONE = 'The link is invalid, expired or already used: ask for a new one';

type Purpose = 'password_reset' | 'email_change';
export type AccountMailKind = 'password_reset' | 'email_change' | 'email_changed';

/** Re-authentication for a sensitive change: the current password, or a fresh TOTP code when MFA is on. */
export type Reauth = { currentPassword?: unknown; totpCode?: unknown };

export type TenantSessionView = {
  id: string;
  createdAt: Date;
  lastUsedAt: Date;
  expiresAt: Date;
  ip: string | null;
  current: boolean;
};

type Deps = Pick<ServiceDeps, 'db' | 'config' | 'logger'> & {
  mfa: MfaService;
  projects: ProjectService;
  mail: MailQueue<AccountMailKind>;
  /** Failed sign-ins (and re-authentications), keyed `account:<email>` or `ip:<address>`. */
  signInLimiter: Pick<FailureLimiter, 'check' | 'fail' | 'reset'>;
  /** Reset mails per account and per client address: every request counts. */
  mailLimiter: Pick<FailureLimiter, 'check' | 'fail'>;
};

export type AccountLifecycleService = ReturnType<typeof createAccountLifecycleService>;

export function createAccountLifecycleService({
  db,
  config,
  logger,
  mfa,
  projects,
  mail,
  signInLimiter,
  mailLimiter,
}: Deps) {
  const codeKey = deriveKey(config.internalSecret ?? '', 'tenant:recovery-codes');
  const codeHash = (tenantId: string, code: string) =>
    crypto.createHmac('sha256', codeKey).update(`${tenantId}:${code}`).digest('hex');
  const dashboardUrl = (path: string) => `${config.issuer}/dashboard${path}`;

  async function load(tenantId: string): Promise<Tenant> {
    const tenant = await db.em().findOne(TenantEntity, { id: tenantId });
    if (!tenant) throw errors.invalidToken('The account no longer exists');
    return tenant;
  }

  async function newToken(purpose: Purpose, tenantId: string, email: string): Promise<string> {
    const token = randomToken(purpose === 'password_reset' ? RESET_PREFIX : EMAIL_PREFIX);
    const ttl = purpose === 'password_reset' ? RESET_TTL_MS : EMAIL_CHANGE_TTL_MS;
    await db
      .em()
      .execute(
        'insert into tenant_account_tokens (token_hash, purpose, tenant_id, email, expires_at) values (?, ?, ?, ?, ?)',
        [sha256Hex(token), purpose, tenantId, email, new Date(Date.now() + ttl)],
      );
    return token;
  }

  /** Claims an unused, unexpired token of `purpose` (one statement: of two requests only one wins), or INVALID_TOKEN. */
  async function claim(purpose: Purpose, token: unknown): Promise<{ tenant_id: string; email: string }> {
    if (typeof token !== 'string' || token.length > 200) throw new AppError('INVALID_LINK', TOKEN_GONE);
    const [row] = await db.em().execute<{ tenant_id: string; email: string }[]>(
      `update tenant_account_tokens set used_at = now()
        where token_hash = ? and purpose = ? and used_at is null and expires_at > now()
        returning tenant_id, email`,
      [sha256Hex(token), purpose],
    );
    if (!row) throw new AppError('INVALID_LINK', TOKEN_GONE);
    return row;
  }

  /** Checks a re-authentication: a fresh TOTP code (MFA on) or the current password; wrong answers are counted. */
  async function reauthenticate(tenant: Tenant, reauth: Reauth, ip: string | undefined): Promise<void> {
    const code = typeof reauth.totpCode === 'string' && reauth.totpCode !== '' ? reauth.totpCode : undefined;
    if (code !== undefined && tenant.mfaEnabled) {
      await mfa.checkSignIn(tenant, code);
      return;
    }
    if (typeof reauth.currentPassword !== 'string' || reauth.currentPassword === '')
      throw errors.validation(
        'current_password',
        tenant.mfaEnabled ? 'send the current password or a TOTP code (totp_code)' : 'send the current password',
      );
    const keys = [`account:${tenant.email}`, ...(ip ? [`ip:${ip}`] : [])];
    for (const key of keys) signInLimiter.check(key);
    if (!(await verifyPassword(tenant.passwordHash, reauth.currentPassword))) {
      for (const key of keys) signInLimiter.fail(key);
      throw errors.validation('current_password', 'is wrong');
    }
  }

  /** Revokes the tenant's live sessions but `keep`, and tells every process; answers how many ended. */
  async function revokeSessions(tenantId: string, reason: string, keep?: string): Promise<number> {
    const ids = await db.em().transactional(async (em) => {
      const rows = await em.execute<{ id: string }[]>(
        `update tenant_sessions set revoked_at = now(), revoked_reason = ?
          where tenant_id = ? and revoked_at is null and (?::uuid is null or id <> ?::uuid) returning id`,
        [reason, tenantId, keep ?? null, keep ?? null],
      );
      const revoked = rows.map((r) => r.id);
      if (revoked.length > 0) await publishCredentialChange(em, { sessionIds: revoked });
      return revoked;
    });
    if (ids.length > 0) await credentialChangeCommitted({ sessionIds: ids });
    return ids.length;
  }

  /** New recovery codes for the account (the previous ones stop working); answered once, stored hashed. */
  async function newRecoveryCodes(tenantId: string): Promise<string[]> {
    const codes = Array.from({ length: RECOVERY_CODE_COUNT }, () => {
      const chars = Array.from({ length: 10 }, () => CODE_ALPHABET[crypto.randomInt(CODE_ALPHABET.length)]).join('');
      return `${chars.slice(0, 5)}-${chars.slice(5)}`;
    });
    await db.em().transactional(async (em) => {
      await em.execute('delete from tenant_recovery_codes where tenant_id = ?', [tenantId]);
      const hashes = codes.map((c) => codeHash(tenantId, c.replace('-', '')));
      await em.execute(
        `insert into tenant_recovery_codes (tenant_id, code_hash) values ${hashes.map(() => '(?, ?)').join(', ')}`,
        hashes.flatMap((h) => [tenantId, h]),
      );
    });
    return codes;
  }

  /** Uses one recovery code of the account (once); INVALID_MFA_CODE when it is wrong or used, counted as a wrong code. */
  async function useRecoveryCode(tenant: Tenant, input: unknown): Promise<void> {
    const key = `account:${tenant.email}`;
    signInLimiter.check(key);
    const code = typeof input === 'string' ? input.trim().toLowerCase().replace(/\s/g, '') : '';
    const rows = CODE_SHAPE.test(code)
      ? await db.em().execute<{ ok: number }[]>(
          `update tenant_recovery_codes set used_at = now()
              where tenant_id = ? and code_hash = ? and used_at is null returning 1 as ok`,
          [tenant.id, codeHash(tenant.id, code.replace('-', ''))],
        )
      : [];
    if (rows.length !== 1) {
      signInLimiter.fail(key);
      throw new AppError('INVALID_MFA_CODE', 'The recovery code is wrong or already used');
    }
    logger.info({ tenantId: tenant.id }, 'tenant signed in with a recovery code');
  }

  return {
    /** Mails a reset link when the address has an account; the answer is the same either way. */
    async requestPasswordReset(emailInput: unknown, ip?: string): Promise<void> {
      const email = normalizeEmail(emailInput);
      const keys = [`account:${email}`, ...(ip ? [`ip:${ip}`] : [])];
      for (const key of keys) mailLimiter.check(key);
      for (const key of keys) mailLimiter.fail(key);
      const tenant = await db.em().findOne(TenantEntity, { email });
      if (!tenant) return;
      const token = await newToken('password_reset', tenant.id, email);
      await mail.queue({
        to: email,
        kind: 'password_reset',
        subject: 'Reset your Tessera password',
        text:
          `Someone asked to reset the password of your Tessera account. To choose a new password, open this link:\n\n` +
          `${dashboardUrl(`/reset-password?token=${token}`)}\n\n` +
          `Or send this token with your new password to POST /auth/api/v1/tenant/password/reset: ${token}\n\n` +
          `The link works once and for 1 hour. If you did not ask for it, ignore this mail: your password stays as it is.\n`,
      });
    },

    /** Sets a new password with a reset token; every session of the account ends. MFA, when on, stays on. */
    async resetPassword(input: { token: unknown; newPassword: unknown }): Promise<void> {
      const password = checkPassword(input.newPassword, 'new_password');
      const row = await claim('password_reset', input.token);
      const tenant = await db.em().findOne(TenantEntity, { id: row.tenant_id });
      // The address changed since the mail was sent: the link went to the old one.
      if (!tenant || tenant.email !== row.email) throw new AppError('INVALID_LINK', TOKEN_GONE);
      await db
        .em()
        .nativeUpdate(
          TenantEntity,
          { id: tenant.id },
          { passwordHash: await hashPassword(password), updatedAt: new Date() },
        );
      // Other reset links of the account stop working too.
      await db
        .em()
        .execute(
          `update tenant_account_tokens set used_at = now() where tenant_id = ? and purpose = 'password_reset' and used_at is null`,
          [tenant.id],
        );
      await revokeSessions(tenant.id, 'password_reset');
      signInLimiter.reset(`account:${tenant.email}`);
    },

    /** Changes the password after re-authentication; the account's other sessions end, this one stays. */
    async changePassword(
      tenantId: string,
      sessionId: string,
      input: Reauth & { newPassword: unknown },
      ip?: string,
    ): Promise<void> {
      const password = checkPassword(input.newPassword, 'new_password');
      const tenant = await load(tenantId);
      await reauthenticate(tenant, input, ip);
      await db
        .em()
        .nativeUpdate(
          TenantEntity,
          { id: tenant.id },
          { passwordHash: await hashPassword(password), updatedAt: new Date() },
        );
      await revokeSessions(tenant.id, 'password_change', sessionId);
    },

    /**
     * Mails a confirmation link to the new address after re-authentication; the address changes when the link is
     * opened. When the new address already has an account, that address is told so instead (the caller is not).
     */
    async requestEmailChange(tenantId: string, input: Reauth & { newEmail: unknown }, ip?: string): Promise<void> {
      const email = normalizeEmail(input.newEmail);
      const tenant = await load(tenantId);
      if (email === tenant.email) throw errors.validation('new_email', 'is already the account’s address');
      await reauthenticate(tenant, input, ip);
      const keys = [`account:${email}`, `account:${tenant.email}`, ...(ip ? [`ip:${ip}`] : [])];
      for (const key of keys) mailLimiter.check(key);
      for (const key of keys) mailLimiter.fail(key);
      if (await db.em().count(TenantEntity, { email })) {
        await mail.queue({
          to: email,
          kind: 'email_change',
          subject: 'Your address is already used by a Tessera account',
          text: `Someone signed in to another Tessera account asked to move that account to this address, but this address already has an account, so nothing changed. If it was you, use another address or delete one of the accounts.\n`,
        });
        return;
      }
      const token = await newToken('email_change', tenant.id, email);
      await mail.queue({
        to: email,
        kind: 'email_change',
        subject: 'Confirm your new Tessera e-mail address',
        text:
          `To make this the sign-in address of your Tessera account (now ${tenant.email}), open this link:\n\n` +
          `${dashboardUrl(`/confirm-email?token=${token}`)}\n\n` +
          `Or send this token to POST /auth/api/v1/tenant/email/confirm: ${token}\n\n` +
          `The link works once and for 24 hours. If you did not ask for it, ignore this mail.\n`,
      });
    },

    /** Makes the confirmed address the account's; the old address is told. EMAIL_TAKEN if another account took it meanwhile. */
    async confirmEmailChange(token: unknown): Promise<TenantView> {
      const row = await claim('email_change', token);
      const tenant = await db.em().findOne(TenantEntity, { id: row.tenant_id });
      if (!tenant) throw new AppError('INVALID_LINK', TOKEN_GONE);
      const previous = tenant.email;
      try {
        await db.em().nativeUpdate(TenantEntity, { id: tenant.id }, { email: row.email, updatedAt: new Date() });
      } catch (err) {
        // Another account took the address since the mail was sent: the unique index decides.
        if (err instanceof UniqueConstraintViolationException) throw new AppError('EMAIL_TAKEN');
        throw err;
      }
      // Pending reset links were sent to the old address: they stop working.
      await db
        .em()
        .execute(
          `update tenant_account_tokens set used_at = now() where tenant_id = ? and purpose = 'password_reset' and used_at is null`,
          [tenant.id],
        );
      await mail.queue({
        to: previous,
        kind: 'email_changed',
        subject: 'The e-mail address of your Tessera account changed',
        text: `The sign-in address of your Tessera account is now ${row.email}. If you did not do this, reset your password from the new address's owner or contact the operator of this Tessera install at once.\n`,
      });
      return toTenantView({ ...tenant, email: row.email });
    },

    /** The recovery codes of a new enrolment (called once MFA is on). */
    newRecoveryCodes,

    /** New recovery codes after a fresh TOTP code; the previous codes stop working. */
    async regenerateRecoveryCodes(tenantId: string, code: unknown): Promise<string[]> {
      const tenant = await load(tenantId);
      if (!tenant.mfaEnabled) throw new AppError('MFA_NOT_ENABLED');
      await mfa.checkSignIn(tenant, code);
      return await newRecoveryCodes(tenant.id);
    },

    useRecoveryCode,

    /** Turns MFA on with a first code and answers the enrolment's recovery codes (shown this once). */
    async enableMfa(tenantId: string, code: unknown): Promise<{ mfaEnabled: boolean; recoveryCodes: string[] }> {
      await mfa.verify(tenantId, code);
      return { mfaEnabled: true, recoveryCodes: await newRecoveryCodes(tenantId) };
    },

    /**
     * Turns MFA off with a current TOTP code or, for a lost authenticator, one of the recovery codes; the recovery
     * codes go with it.
     */
    async disableMfa(tenantId: string, code: unknown): Promise<{ mfaEnabled: boolean }> {
      const tenant = await load(tenantId);
      if (!tenant.mfaEnabled) throw new AppError('MFA_NOT_ENABLED');
      if (typeof code === 'string' && CODE_SHAPE.test(code.trim().toLowerCase().replace(/\s/g, ''))) {
        await useRecoveryCode(tenant, code);
        await db
          .em()
          .nativeUpdate(
            TenantEntity,
            { id: tenant.id },
            { mfaEnabled: false, mfaSecret: null, mfaPendingSecret: null, updatedAt: new Date() },
          );
      } else {
        await mfa.disable(tenantId, code);
      }
      await db.em().execute('delete from tenant_recovery_codes where tenant_id = ?', [tenantId]);
      return { mfaEnabled: false };
    },

    /** How many unused recovery codes the account has. */
    async recoveryCodesRemaining(tenantId: string): Promise<number> {
      const [row] = await db
        .em()
        .execute<{ n: string }[]>(
          'select count(*) as n from tenant_recovery_codes where tenant_id = ? and used_at is null',
          [tenantId],
        );
      return Number(row?.n ?? 0);
    },

    /** The account's live sessions, most recently used first; `current` marks the caller's. */
    async listSessions(tenantId: string, currentSessionId: string): Promise<TenantSessionView[]> {
      const rows = await db
        .em()
        .find(
          TenantSessionEntity,
          { tenantId, revokedAt: null, expiresAt: { $gt: new Date() } },
          { orderBy: { lastRefreshedAt: 'desc nulls last', createdAt: 'desc' }, limit: 200 },
        );
      return rows.map((s) => ({
        id: s.id,
        createdAt: s.createdAt,
        lastUsedAt: s.lastRefreshedAt ?? s.createdAt,
        expiresAt: s.expiresAt,
        ip: s.ip ?? null,
        current: s.id === currentSessionId,
      }));
    },

    /** Ends one session of the account (NOT_FOUND for another account's or an unknown id). */
    async revokeSession(tenantId: string, id: unknown): Promise<void> {
      if (typeof id !== 'string' || !isUuid(id)) throw errors.notFound('session', String(id));
      const ids = await db.em().transactional(async (em) => {
        const rows = await em.execute<{ id: string }[]>(
          `update tenant_sessions set revoked_at = now(), revoked_reason = 'revoked'
            where id = ? and tenant_id = ? and revoked_at is null returning id`,
          [id, tenantId],
        );
        if (rows.length > 0) await publishCredentialChange(em, { sessionIds: [id] });
        return rows;
      });
      if (ids.length === 0) throw errors.notFound('session', id);
      await credentialChangeCommitted({ sessionIds: [id] });
    },

    /** "Sign out everywhere": ends every session of the account, or every other one with `keep`. */
    revokeSessions: async (tenantId: string, keep?: string) => await revokeSessions(tenantId, 'sign_out_all', keep),

    /**
     * Deletes the account after re-authentication and a typed confirmation (its e-mail address). Every project it
     * owns is deleted first, exactly as deleting each one does (its database, files, functions, end-users and keys
     * go); then the account, its sessions, tokens and codes. Answers the ids of the projects deleted.
     */
    async deleteAccount(tenantId: string, input: Reauth & { confirm: unknown }, ip?: string): Promise<string[]> {
      const tenant = await load(tenantId);
      if (typeof input.confirm !== 'string' || input.confirm.trim().toLowerCase() !== tenant.email)
        throw errors.validation('confirm', 'type the account’s e-mail address to confirm');
      await reauthenticate(tenant, input, ip);
      const deleted: string[] = [];
      for (;;) {
        const page = await projects.list(tenant.id, { first: 100 });
        if (page.items.length === 0) break;
        for (const project of page.items) {
          await projects.remove(tenant.id, project.id);
          deleted.push(project.id);
        }
      }
      const sessionIds = await db.em().transactional(async (em) => {
        const rows = await em.execute<{ id: string }[]>('select id from tenant_sessions where tenant_id = ?', [
          tenant.id,
        ]);
        await em.nativeDelete(TenantEntity, { id: tenant.id });
        const ids = rows.map((r) => r.id);
        await publishCredentialChange(em, { tenantId: tenant.id, sessionIds: ids });
        return ids;
      });
      await credentialChangeCommitted({ tenantId: tenant.id, sessionIds });
      logger.info({ tenantId: tenant.id, projects: deleted.length }, 'tenant account deleted');
      return deleted;
    },
  };
}
