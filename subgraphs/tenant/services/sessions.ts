// Tenant sessions: sign-in, refresh-token rotation with reuse detection, sign-out, and the access-token
// check the router runs on every request (signature locally, then one primary-key read of the session).
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { TenantSessionEntity } from '../entities/index.ts';
import { toTenantView, type AccountService, type TenantView } from './accounts.ts';
import type { ServiceDeps } from './context.ts';
import { createSecretBox, randomToken, sha256Hex } from '../../../platform/crypto.ts';
import type { MfaService } from './mfa.ts';
import type { AccountLifecycleService } from './account-lifecycle.ts';
import type { SigningKeyService } from './signing-keys.ts';
import { isUuid } from '../../../platform/ids.ts';
import { newRefreshSession, revokeReusedSessions, rotateRefreshToken } from '../../../platform/refresh-sessions.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';

const REFRESH_PREFIX = 'tsr_';
/**
 * Seconds after a rotation during which the token rotated away, presented again from the same client address, gets
 * the same new refresh token (and a fresh access token) instead of ending the session: GoTrue's refresh-token reuse
 * interval (10 s there too). Two tabs or two calls of one page refreshing at once are not a theft.
 */
export const REFRESH_REUSE_INTERVAL_SECONDS = 10;

export type SessionPayload = {
  accessToken: string;
  refreshToken: string;
  tokenType: 'Bearer';
  expiresIn: number;
  tenant: TenantView;
};

export type SessionService = ReturnType<typeof createSessionService>;

type Deps = Pick<ServiceDeps, 'db' | 'config' | 'logger'> & {
  accounts: AccountService;
  mfa: MfaService;
  signingKeys: SigningKeyService;
  lifecycle: Pick<AccountLifecycleService, 'useRecoveryCode'>;
};

/** Creates the session service. */
export function createSessionService({ db, config, logger, accounts, mfa, signingKeys, lifecycle }: Deps) {
  async function issue(tenant: TenantView, sessionId: string, refreshToken: string): Promise<SessionPayload> {
    const { token, expiresIn } = await signingKeys.sign({ tenantId: tenant.id, sessionId });
    return { accessToken: token, refreshToken, tokenType: 'Bearer', expiresIn, tenant };
  }

  /** The box the successor of `refreshToken` is sealed in: the internal secret and that token are both needed. */
  const successorBox = (refreshToken: string) =>
    createSecretBox(`${config.internalSecret}:${refreshToken}`, 'tenant:refresh-successor');

  /**
   * Within the reuse interval, from the same client address (when both are known), the token the session was just
   * rotated from gets the session's current refresh token again, with a new access token; otherwise nothing.
   */
  async function presentedAgain(refreshToken: string, oldHash: string, ip: string | undefined) {
    const [row] = await db
      .em()
      .execute<{ id: string; tenant_id: string; refreshed_ip: string | null; successor_sealed: string | null }[]>(
        `select id, tenant_id, refreshed_ip, successor_sealed from tenant_sessions
        where refreshed_from_hash = ? and last_refreshed_at > now() - make_interval(secs => ?)
          and revoked_at is null and expires_at > now()`,
        [oldHash, REFRESH_REUSE_INTERVAL_SECONDS],
      );
    if (!row?.successor_sealed) return undefined;
    if (row.refreshed_ip && ip && row.refreshed_ip !== ip) return undefined;
    let successor: string;
    try {
      successor = successorBox(refreshToken).decrypt(row.successor_sealed);
    } catch {
      return undefined;
    }
    const tenant = await accounts.get(row.tenant_id);
    if (!tenant) return undefined;
    logger.info({ sessionId: row.id }, 'refresh token presented again within the reuse interval: same pair');
    return await issue(tenant, row.id, successor);
  }

  const suspended = async (tenantId: string): Promise<boolean> => {
    const [row] = await db
      .em()
      .execute<{ s: boolean }[]>('select suspended_at is not null as s from tenants where id = ?', [tenantId]);
    return row?.s === true;
  };

  return {
    /** Password (and, when MFA is on, a TOTP code or one of the account's recovery codes) for a new session. */
    async login(
      input: { email: unknown; password: unknown; totpCode?: unknown; recoveryCode?: unknown },
      ip?: string,
    ): Promise<SessionPayload> {
      const tenant = await accounts.verifyCredentials(input.email, input.password, ip);
      const useRecovery =
        tenant.mfaEnabled &&
        (input.totpCode === undefined || input.totpCode === null || input.totpCode === '') &&
        typeof input.recoveryCode === 'string' &&
        input.recoveryCode !== '';
      if (useRecovery) await lifecycle.useRecoveryCode(tenant, input.recoveryCode);
      else await mfa.checkSignIn(tenant, input.totpCode);
      accounts.signedIn(tenant);
      // Only after the password (and code) were right: a suspension is no oracle of which addresses have accounts.
      if (tenant.suspendedAt) throw errors.tenantSuspended();
      const refreshToken = randomToken(REFRESH_PREFIX);
      const em = db.em();
      const session = em.create(TenantSessionEntity, {
        id: crypto.randomUUID(),
        tenantId: tenant.id,
        ...newRefreshSession(refreshToken, config.refreshTokenTtl, ip),
      });
      await em.flush();
      return await issue(toTenantView(tenant), session.id, refreshToken);
    },

    /**
     * Trades a refresh token for a new pair. The swap is one conditional UPDATE, so of two requests with the same token
     * only one wins; the other, within the reuse interval and from the same address, gets the same new pair.
     * Presenting an already rotated token otherwise revokes the session.
     */
    async refresh(refreshToken: unknown, ip?: string): Promise<SessionPayload> {
      if (typeof refreshToken !== 'string' || !refreshToken.startsWith(REFRESH_PREFIX)) throw errors.invalidToken();
      const oldHash = sha256Hex(refreshToken);
      const next = randomToken(REFRESH_PREFIX);
      const em = db.em();
      const row = await rotateRefreshToken<{ id: string; tenant_id: string }>(em, {
        table: 'tenant_sessions',
        oldHash,
        nextToken: next,
        ttlSeconds: config.refreshTokenTtl,
        returning: 'id, tenant_id',
        set: ', refreshed_from_hash = ?, refreshed_ip = ?, successor_sealed = ?',
        setParams: [oldHash, ip ?? null, successorBox(refreshToken).encrypt(next)],
      });
      if (!row) {
        const again = await presentedAgain(refreshToken, oldHash, ip);
        if (again) return again;
        const reused = await em.transactional(async (tx) => {
          const ids = await revokeReusedSessions(tx, 'tenant_sessions', oldHash);
          if (ids.length > 0) await publishCredentialChange(tx, { sessionIds: ids });
          return ids;
        });
        if (reused.length > 0) await credentialChangeCommitted({ sessionIds: reused });
        if (reused.length > 0)
          logger.warn({ sessionId: reused[0] }, 'rotated refresh token presented again: session revoked');
        throw errors.invalidToken(
          reused.length > 0 ? 'The refresh token was already used: the session is revoked' : undefined,
        );
      }
      const tenant = await accounts.get(row.tenant_id);
      if (!tenant) throw errors.invalidToken();
      if (await suspended(tenant.id)) throw errors.tenantSuspended();
      return await issue(tenant, row.id, next);
    },

    /** Ends a session: its refresh token and every access token carrying its id stop working at once. */
    async logout(tenantId: string, sessionId: string): Promise<void> {
      await db.em().transactional(async (em) => {
        await em.nativeUpdate(
          TenantSessionEntity,
          { id: sessionId, tenantId, revokedAt: null },
          { revokedAt: new Date(), revokedReason: 'logout' },
        );
        await publishCredentialChange(em, { sessionIds: [sessionId] });
      });
      await credentialChangeCommitted({ sessionIds: [sessionId] });
    },

    /** Checks an access token: signature, expiry, audience, then that its session is still active. */
    async authenticate(token: string): Promise<{ tenantId: string; sessionId: string }> {
      const { tenantId, sessionId } = await signingKeys.verify(token);
      if (!isUuid(tenantId) || !isUuid(sessionId)) throw errors.invalidToken();
      const rows = await db.em().execute<{ suspended: boolean }[]>(
        `select t.suspended_at is not null as suspended from tenant_sessions s join tenants t on t.id = s.tenant_id
          where s.id = ? and s.tenant_id = ? and s.revoked_at is null`,
        [sessionId, tenantId],
      );
      if (rows.length === 0) throw errors.invalidToken();
      if (rows[0]!.suspended) throw errors.tenantSuspended();
      return { tenantId, sessionId };
    },
  };
}
