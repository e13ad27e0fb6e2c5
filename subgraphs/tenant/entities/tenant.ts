import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** A developer account. Sealed columns hold values encrypted with the secret box. */
export const TenantEntity = defineEntity({
  name: 'Tenant',
  tableName: 'tenants',
  properties: {
    id: p.uuid().primary(),
    /** Normalised to lower case; unique. */
    email: p.text(),
    name: p.text(),
    passwordHash: p.text(),
    planId: p.text(),
    mfaEnabled: p.boolean(),
    /** Sealed TOTP secret of the active enrolment. */
    mfaSecret: p.text().nullable(),
    /** Sealed TOTP secret waiting for its first code (mfaVerify). */
    mfaPendingSecret: p.text().nullable(),
    /** Last accepted TOTP time step: a code at or before it is a replay. */
    mfaLastTimeStep: p.bigint('number').nullable(),
    /** Set while an operator has suspended the account: every call of it and of its projects is refused (403). */
    suspendedAt: p.datetime().nullable(),
    suspendedReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type Tenant = InferEntity<typeof TenantEntity>;
