import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';
import { refreshSessionProperties } from '../../../platform/refresh-sessions.ts';

/** One sign-in of a tenant: its access tokens carry the id as `sid`, its refresh token rotates on use. */
export const TenantSessionEntity = defineEntity({
  name: 'TenantSession',
  tableName: 'tenant_sessions',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    ...refreshSessionProperties(),
    /** SHA-256 of the refresh token the session was last rotated from (its reuse interval). */
    refreshedFromHash: p.text().nullable(),
    /** The client address of that rotation. */
    refreshedIp: p.text().nullable(),
    /** The current refresh token, sealed under the internal secret and the token it was rotated from. */
    successorSealed: p.text().nullable(),
  },
});

export type TenantSession = InferEntity<typeof TenantSessionEntity>;
