import { defineEntity, p, type InferEntity } from '@mikro-orm/postgresql';

/** An OAuth 2.0 / OIDC client of a project's identity provider. */
export const ProjectOidcClientEntity = defineEntity({
  name: 'ProjectOidcClient',
  tableName: 'project_oidc_clients',
  properties: {
    clientId: p.text().primary(),
    projectId: p.uuid(),
    name: p.text(),
    clientSecretSealed: p.text(),
    clientSecretHash: p.text(),
    redirectUris: p.array(),
    grantTypes: p.array(),
    /** The client created with the project. */
    isDefault: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type ProjectOidcClient = InferEntity<typeof ProjectOidcClientEntity>;
