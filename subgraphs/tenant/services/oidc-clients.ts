// OAuth 2.0 / OIDC clients of a project's identity provider. The secret is sealed for the owner to
// read back and hashed (SHA-256) for the identity provider's credential check.
import { errors } from '../../../platform/errors.ts';
import { ProjectOidcClientEntity, type ProjectOidcClient } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import { randomToken, safeEqual, sha256Hex } from '../../../platform/crypto.ts';
import type { ProjectService } from './projects.ts';
import { checkName, checkRedirectUris } from './validation.ts';

export const DEFAULT_GRANT_TYPES = ['password', 'authorization_code', 'client_credentials', 'refresh_token'];
const CLIENT_ID_PREFIX = 'tsc_';
const CLIENT_SECRET_PREFIX = 'tss_';

type SqlEm = ReturnType<ServiceDeps['db']['em']>;

function newSecret(box: ServiceDeps['box']) {
  const secret = randomToken(CLIENT_SECRET_PREFIX);
  return { clientSecretSealed: box.encrypt(secret), clientSecretHash: sha256Hex(secret) };
}

/** Creates (persists on the next flush of `em`) a new client with every grant type and no redirect URI. */
export function newOidcClient(em: SqlEm, box: ServiceDeps['box'], opts: { projectId: string; name: string; isDefault: boolean; now: Date }): ProjectOidcClient {
  return em.create(ProjectOidcClientEntity, {
    clientId: randomToken(CLIENT_ID_PREFIX, 18),
    projectId: opts.projectId,
    name: opts.name,
    ...newSecret(box),
    redirectUris: [],
    grantTypes: [...DEFAULT_GRANT_TYPES],
    isDefault: opts.isDefault,
    isPublic: false,
    createdAt: opts.now,
    updatedAt: opts.now,
  });
}

/** What the identity provider needs to know about a client. */
export type ResolvedOidcClient = { client: ProjectOidcClient; tenantId: string; secretValid: boolean | null };

export type OidcClientService = ReturnType<typeof createOidcClientService>;

/** Creates the OIDC client service. */
export function createOidcClientService({ db, box, projects }: Pick<ServiceDeps, 'db' | 'box'> & { projects: ProjectService }) {
  async function getOwned(tenantId: string, projectId: string, clientId: string): Promise<ProjectOidcClient> {
    const project = await projects.getOwned(tenantId, projectId);
    const client = await db.em().findOne(ProjectOidcClientEntity, { clientId, projectId: project.id });
    if (!client) throw errors.notFound('oidc_client', clientId.slice(0, 100));
    return client;
  }

  return {
    /** The project's clients, oldest first (the default client first). */
    async list(projectId: string): Promise<ProjectOidcClient[]> {
      return await db.em().find(ProjectOidcClientEntity, { projectId }, { orderBy: [{ createdAt: 'asc' }, { clientId: 'asc' }] });
    },

    /** Renames a client and/or replaces its redirect URIs. */
    async update(tenantId: string, projectId: string, clientId: string, input: { name?: unknown; redirectUris?: unknown; public?: unknown }): Promise<ProjectOidcClient> {
      const change: Partial<Pick<ProjectOidcClient, 'name' | 'redirectUris' | 'isPublic'>> = {};
      if (input.public !== undefined && input.public !== null) {
        if (typeof input.public !== 'boolean') throw errors.validation('public', 'must be true or false');
        change.isPublic = input.public;
      }
      if (input.name !== undefined && input.name !== null) change.name = checkName('name', input.name);
      if (input.redirectUris !== undefined && input.redirectUris !== null) change.redirectUris = checkRedirectUris('redirectUris', input.redirectUris);
      const client = await getOwned(tenantId, projectId, clientId);
      const em = db.em();
      await em.nativeUpdate(ProjectOidcClientEntity, { clientId: client.clientId }, { ...change, updatedAt: new Date() });
      return (await em.findOne(ProjectOidcClientEntity, { clientId: client.clientId })) as ProjectOidcClient;
    },

    /** Gives the client a new secret; the old one stops working at once. */
    async rotateSecret(tenantId: string, projectId: string, clientId: string): Promise<ProjectOidcClient> {
      const client = await getOwned(tenantId, projectId, clientId);
      const em = db.em();
      await em.nativeUpdate(ProjectOidcClientEntity, { clientId: client.clientId }, { ...newSecret(box), updatedAt: new Date() });
      return (await em.findOne(ProjectOidcClientEntity, { clientId: client.clientId })) as ProjectOidcClient;
    },

    /** The client's secret in clear. */
    revealSecret(client: ProjectOidcClient): string {
      return box.decrypt(client.clientSecretSealed);
    },

    /** For the identity provider: the client by id and, when a secret is given, whether it matches. */
    async resolve(clientId: string, clientSecret?: string | null): Promise<ResolvedOidcClient | null> {
      const client = await db.em().findOne(ProjectOidcClientEntity, { clientId });
      if (!client) return null;
      const project = await projects.load(client.projectId);
      if (!project) return null;
      const secretValid = typeof clientSecret === 'string' ? safeEqual(sha256Hex(clientSecret), client.clientSecretHash) : null;
      return { client, tenantId: project.tenantId, secretValid };
    },
  };
}
