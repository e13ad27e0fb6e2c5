// Password reset, e-mail verification, invitations and password change. Reset and verification tokens are random,
// stored hashed, single use and expiring; requests answer the same whether the e-mail is known or not. An invitation
// is a password-reset token that lives longer (7 days), mailed as an invitation: its link opens the same page.
import { errors } from '../../../platform/errors.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { EndUserEntity } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { Limiters } from './limits.ts';
import type { MailService } from './mail.ts';
import type { TokenService } from './tokens.ts';
import type { UserService } from './users.ts';
import { checkPassword, normalizeEmail } from './validation.ts';

const RESET_PREFIX = 'tpr_';
const VERIFY_PREFIX = 'tev_';
const RESET_TTL_MS = 60 * 60_000;
const VERIFY_TTL_MS = 24 * 60 * 60_000;
export const INVITE_TTL_MS = 7 * 24 * 60 * 60_000;

type Purpose = 'password_reset' | 'email_verification';

type Deps = Pick<ServiceDeps, 'db' | 'config'> & {
  users: UserService;
  tokens: TokenService;
  mail: MailService;
  limiters: Limiters;
};

export type RecoveryService = ReturnType<typeof createRecoveryService>;

export function createRecoveryService({ db, config, users, tokens, mail, limiters }: Deps) {
  async function newToken(
    purpose: Purpose,
    user: { id: string; projectId: string; email: string },
    ttl = purpose === 'password_reset' ? RESET_TTL_MS : VERIFY_TTL_MS,
  ): Promise<string> {
    const token = randomToken(purpose === 'password_reset' ? RESET_PREFIX : VERIFY_PREFIX);
    await db
      .em()
      .execute(
        `insert into identity_user_tokens (token_hash, purpose, project_id, user_id, email, expires_at, created_at) values (?, ?, ?, ?, ?, ?, now())`,
        [sha256Hex(token), purpose, user.projectId, user.id, user.email, new Date(Date.now() + ttl)],
      );
    return token;
  }

  /** The unused, unexpired token row, or INVALID_TOKEN. */
  async function findToken(
    purpose: Purpose,
    token: unknown,
  ): Promise<{ token_hash: string; user_id: string; email: string }> {
    if (typeof token !== 'string' || token.length > 200)
      throw errors.invalidToken('The token is invalid, expired or already used');
    const rows = await db
      .em()
      .execute<{ token_hash: string; user_id: string; email: string }[]>(
        'select token_hash, user_id, email from identity_user_tokens where token_hash = ? and purpose = ? and used_at is null and expires_at > now()',
        [sha256Hex(token), purpose],
      );
    if (!rows[0]) throw errors.invalidToken('The token is invalid, expired or already used');
    return rows[0];
  }

  /** Marks a token used; false when another request used it first. */
  async function claim(hash: string): Promise<boolean> {
    const rows = await db
      .em()
      .execute<{ token_hash: string }[]>(
        'update identity_user_tokens set used_at = now() where token_hash = ? and used_at is null returning token_hash',
        [hash],
      );
    return rows.length === 1;
  }

  async function sendVerification(user: { id: string; projectId: string; email: string }): Promise<void> {
    const token = await newToken('email_verification', user);
    await mail.queue({
      projectId: user.projectId,
      to: user.email,
      kind: 'email_verification',
      subject: 'Confirm your e-mail address',
      text: `Confirm your e-mail address by opening this link:\n\n${config.issuer}/email/verify/confirm?token=${token}\n\nOr send this token to /email/verify/confirm: ${token}\n\nThe link works once and for 24 hours.\n`,
    });
  }

  return {
    /** Mails a reset token when the e-mail is registered in the project; the answer is the same either way. */
    async requestPasswordReset(projectId: string, emailInput: unknown, ip?: string): Promise<void> {
      const email = normalizeEmail(emailInput);
      limiters.mail.hit([`account:${projectId}:${email}`, ...(ip ? [`ip:${ip}`] : [])]);
      const user = await users.findByEmail(projectId, email);
      if (!user) return;
      const token = await newToken('password_reset', user);
      await mail.queue({
        projectId,
        to: user.email,
        kind: 'password_reset',
        subject: 'Reset your password',
        text: `Someone asked to reset the password of this account. To choose a new password, open this link:\n\n${config.issuer}/password/reset/confirm?token=${token}\n\nOr send this token with your new password to /password/reset/confirm: ${token}\n\nThe link works once and for 1 hour. If you did not ask for it, ignore this mail.\n`,
      });
    },

    /**
     * Mails an invitation to a user made without a password (the admin API): a link to choose one, working once and
     * for 7 days. Choosing the password also confirms the address (confirmPasswordReset).
     */
    async sendInvitation(user: { id: string; projectId: string; email: string }): Promise<void> {
      const token = await newToken('password_reset', user, INVITE_TTL_MS);
      await mail.queue({
        projectId: user.projectId,
        to: user.email,
        kind: 'invitation',
        subject: 'You are invited: choose your password',
        text: `You have been invited to create an account with this e-mail address (${user.email}). To accept the invitation, choose your password by opening this link:\n\n${config.issuer}/password/reset/confirm?token=${token}\n\nOr send this token with your new password to /password/reset/confirm: ${token}\n\nThe link works once and for 7 days. If you did not expect this invitation, ignore this mail.\n`,
      });
    },

    /** Sets a new password with a reset token; every session of the user is revoked. */
    async confirmPasswordReset(token: unknown, newPassword: unknown): Promise<void> {
      const row = await findToken('password_reset', token);
      const user = await users.load(row.user_id);
      if (!user || user.email !== row.email) throw errors.invalidToken('The token is invalid, expired or already used');
      checkPassword(newPassword, user.email, 'new_password');
      if (!(await claim(row.token_hash))) throw errors.invalidToken('The token is invalid, expired or already used');
      await users.setPassword(user, newPassword, 'new_password');
      // The mail reached its owner: that also proves the address.
      await db.em().nativeUpdate(EndUserEntity, { id: user.id }, { emailVerified: true });
      await tokens.revokeUserSessions(user.id, 'password_reset');
    },

    /** Mails a verification token to the user's address (nothing when it is verified already). */
    async requestEmailVerification(userId: string, ip?: string): Promise<void> {
      const user = await users.get(userId);
      limiters.mail.hit([`account:${user.projectId}:${user.email}`, ...(ip ? [`ip:${ip}`] : [])]);
      if (user.emailVerified) return;
      await sendVerification(user);
    },

    /** The same, by e-mail within a project (an API-key caller); the answer is the same for unknown addresses. */
    async requestEmailVerificationByEmail(projectId: string, emailInput: unknown, ip?: string): Promise<void> {
      const email = normalizeEmail(emailInput);
      limiters.mail.hit([`account:${projectId}:${email}`, ...(ip ? [`ip:${ip}`] : [])]);
      const user = await users.findByEmail(projectId, email);
      if (!user || user.emailVerified) return;
      await sendVerification(user);
    },

    /** Marks the address verified, if it is still the user's address. */
    async confirmEmailVerification(token: unknown): Promise<void> {
      const row = await findToken('email_verification', token);
      if (!(await claim(row.token_hash))) throw errors.invalidToken('The token is invalid, expired or already used');
      const updated = await db
        .em()
        .nativeUpdate(
          EndUserEntity,
          { id: row.user_id, email: row.email },
          { emailVerified: true, updatedAt: new Date() },
        );
      if (updated !== 1) throw errors.invalidToken('The e-mail address has changed since the token was sent');
    },

    /** Changes the password of a signed-in user after checking the current one; other sessions are revoked. */
    async changePassword(
      userId: string,
      sessionId: string | undefined,
      currentPassword: unknown,
      newPassword: unknown,
      ip?: string,
    ): Promise<void> {
      const user = await users.load(userId);
      if (!user) throw errors.invalidToken('The account no longer exists');
      const keys = [`account:${user.projectId}:${user.email}`, ...(ip ? [`ip:${ip}`] : [])];
      limiters.signIn.check(keys);
      if (!(await users.checkPassword(user, currentPassword))) {
        limiters.signIn.fail(keys);
        throw errors.validation('current_password', 'is wrong');
      }
      await users.setPassword(user, newPassword, 'new_password');
      await tokens.revokeUserSessions(user.id, 'password_change', sessionId ?? null);
    },
  };
}
