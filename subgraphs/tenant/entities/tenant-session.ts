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
  },
});

export type TenantSession = InferEntity<typeof TenantSessionEntity>;
