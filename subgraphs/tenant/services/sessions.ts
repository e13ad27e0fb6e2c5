// Tenant sessions: sign-in, refresh-token rotation with reuse detection, sign-out, and the access-token
// check the router runs on every request (signature locally, then one primary-key read of the session).
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { TenantSessionEntity } from '../entities/index.ts';
import { toTenantView, type AccountService, type TenantView } from './accounts.ts';
import type { ServiceDeps } from './context.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import type { MfaService } from './mfa.ts';
import type { SigningKeyService } from './signing-keys.ts';
import { isUuid } from '../../../platform/ids.ts';
import { newRefreshSession, revokeReusedSessions, rotateRefreshToken } from '../../../platform/refresh-sessions.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';

const REFRESH_PREFIX = 'tsr_';

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
};

/** Creates the session service. */
export function createSessionService({ db, config, logger, accounts, mfa, signingKeys }: Deps) {
  async function issue(tenant: TenantView, sessionId: string, refreshToken: string): Promise<SessionPayload> {
    const { token, expiresIn } = await signingKeys.sign({ tenantId: tenant.id, sessionId });
    return { accessToken: token, refreshToken, tokenType: 'Bearer', expiresIn, tenant };
  }

  return {
    /** Password (and TOTP code when MFA is on) for a new session. */
    async login(
      input: { email: unknown; password: unknown; totpCode?: unknown },
      ip?: string,
    ): Promise<SessionPayload> {
      const tenant = await accounts.verifyCredentials(input.email, input.password, ip);
      await mfa.checkSignIn(tenant, input.totpCode);
      accounts.signedIn(tenant);
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
     * Trades a refresh token for a new pair. The swap is one conditional UPDATE, so of two requests
     * with the same token only one wins; presenting an already rotated token revokes the session.
     */
    async refresh(refreshToken: unknown): Promise<SessionPayload> {
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
      });
      if (!row) {
        const reused = await em.transactional(async (tx) => {
          const ids = await revokeReusedSessions(tx, 'tenant_sessions', oldHash);
          if (ids.length > 0) await publishCredentialChange(tx, { sessionIds: ids });
          return ids;
        });
        if (reused.length > 0) credentialChangeCommitted({ sessionIds: reused });
        if (reused.length > 0)
          logger.warn({ sessionId: reused[0] }, 'rotated refresh token presented again: session revoked');
        throw errors.invalidToken(
          reused.length > 0 ? 'The refresh token was already used: the session is revoked' : undefined,
        );
      }
      const tenant = await accounts.get(row.tenant_id);
      if (!tenant) throw errors.invalidToken();
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
      credentialChangeCommitted({ sessionIds: [sessionId] });
    },

    /** Checks an access token: signature, expiry, audience, then that its session is still active. */
    async authenticate(token: string): Promise<{ tenantId: string; sessionId: string }> {
      const { tenantId, sessionId } = await signingKeys.verify(token);
      if (!isUuid(tenantId) || !isUuid(sessionId)) throw errors.invalidToken();
      const rows = await db
        .em()
        .execute<{ ok: number }[]>(
          'select 1 as ok from tenant_sessions where id = ? and tenant_id = ? and revoked_at is null',
          [sessionId, tenantId],
        );
      if (rows.length === 0) throw errors.invalidToken();
      return { tenantId, sessionId };
    },
  };
}
