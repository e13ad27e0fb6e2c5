import { defineEntity, type InferEntity } from '@mikro-orm/postgresql';
import { signingKeyProperties } from '../../../platform/signing-keys.ts';

/** An ES256 key pair signing tenant access tokens. One `current`, at most one `previous` still verifying. */
export const TenantSigningKeyEntity = defineEntity({
  name: 'TenantSigningKey',
  tableName: 'tenant_signing_keys',
  properties: {
    ...signingKeyProperties(),
  },
});

export type TenantSigningKey = InferEntity<typeof TenantSigningKeyEntity>;
