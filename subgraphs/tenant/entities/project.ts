import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** A tenant's project. Its keys (the secret API key and the publishable key) are sealed for the owner to read back and hashed for lookup. */
export const ProjectEntity = defineEntity({
  name: 'Project',
  tableName: 'projects',
  properties: {
    id: p.uuid().primary(),
    tenantId: p.uuid(),
    name: p.text(),
    apiKeySealed: p.text(),
    /** SHA-256 of the API key; unique, the only column credentials are looked up by. */
    apiKeyHash: p.text(),
    /** The first characters of the key, safe to show in lists and logs. */
    apiKeyPrefix: p.text(),
    /** The publishable key (`tpk_...`, for browsers and apps), sealed, hashed and prefixed like the API key; made on first read for older projects. */
    publishableKeySealed: p.text().nullable(),
    publishableKeyHash: p.text().nullable(),
    publishableKeyPrefix: p.text().nullable(),
    /** Set while an operator has suspended the project: every call for it is refused (403), its data is kept. */
    suspendedAt: p.datetime().nullable(),
    suspendedReason: p.text().nullable(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type Project = InferEntity<typeof ProjectEntity>;
