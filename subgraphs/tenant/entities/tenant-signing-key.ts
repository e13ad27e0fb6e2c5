import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** An ES256 key pair signing tenant access tokens. One `current`, at most one `previous` still verifying. */
export const TenantSigningKeyEntity = defineEntity({
  name: 'TenantSigningKey',
  tableName: 'tenant_signing_keys',
  properties: {
    kid: p.text().primary(),
    alg: p.text(),
    publicJwk: p.json<Record<string, unknown>>(),
    /** Sealed private JWK (JSON). */
    privateJwkSealed: p.text(),
    /** `current`, `previous` or `retired`. */
    status: p.text(),
    createdAt: p.datetime(),
    retiredAt: p.datetime().nullable(),
  },
});

export type TenantSigningKey = InferEntity<typeof TenantSigningKeyEntity>;
