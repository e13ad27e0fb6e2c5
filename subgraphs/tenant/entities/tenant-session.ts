import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** One sign-in of a tenant: its access tokens carry the id as `sid`, its refresh token rotates on use. */
export const TenantSessionEntity = defineEntity({
  name: 'TenantSession',
  tableName: 'tenant_sessions',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    /** SHA-256 of the current refresh token. */
    refreshTokenHash: p.text(),
    /** SHA-256 of recently rotated refresh tokens (newest first): presenting one revokes the session. */
    rotatedRefreshTokenHashes: p.array(),
    createdAt: p.datetime(),
    lastRefreshedAt: p.datetime().nullable(),
    /** End of the refresh token's life; sliding, moved on every refresh. */
    expiresAt: p.datetime(),
    revokedAt: p.datetime().nullable(),
    /** `logout`, `refresh_token_reuse`, ... */
    revokedReason: p.text().nullable(),
    ip: p.text().nullable(),
  },
});

export type TenantSession = InferEntity<typeof TenantSessionEntity>;
