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
    /** Scopes the client may be issued (`role:*`: role scopes, for roles assigned to the end-user). */
    allowedScopes: p.array(),
    /** The client created with the project. */
    isDefault: p.boolean(),
    /** A public client (browser or native app) has no usable secret: the identity provider requires PKCE. */
    isPublic: p.boolean(),
    createdAt: p.datetime(),
    updatedAt: p.datetime(),
  },
});

export type ProjectOidcClient = InferEntity<typeof ProjectOidcClientEntity>;
