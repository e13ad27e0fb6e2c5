// OAuth 2.0 / OIDC clients of a project's identity provider. The secret is sealed for the owner to
// read back and hashed (SHA-256) for the identity provider's credential check.
// The identity provider asks for a client on every /token, /introspect and /revocation request, so the
// clients it asked for are kept in memory (what the check needs, the secret only as its stored hash).
// Every change (secret rotation, settings, the project's deletion) drops them at once: in this process
// right after its commit (announceLocally), in every other one through the `oidc-clients.changed`
// broadcast sent in the same transaction (the identity subgraph's own client cache hears it too). Nothing
// is trusted while the broadcast connection is down, a reconnection empties the cache, and nothing is kept
// longer than a minute. Until `start()` listens for broadcasts, nothing is cached.
import { errors } from '../../../platform/errors.ts';
import {
  announceLocally,
  publishBroadcast,
  startBroadcastListener,
  type BroadcastListener,
  type BroadcastTopics,
} from '../../../platform/broadcast.ts';
import { ProjectOidcClientEntity, type ProjectOidcClient } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import { randomToken, safeEqual, sha256Hex } from '../../../platform/crypto.ts';
import type { ProjectService } from './projects.ts';
import { checkAllowedScopes, checkName, checkRedirectUris } from './validation.ts';
import { isAdminScope } from '../../../platform/admin-scopes.ts';

export const DEFAULT_GRANT_TYPES = ['password', 'authorization_code', 'client_credentials', 'refresh_token'];
/** Scopes a new client may be issued: the OpenID Connect ones and role scopes. API and admin scopes are granted by the tenant. */
export const DEFAULT_ALLOWED_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'role:*'];
const CLIENT_ID_PREFIX = 'tsc_';
const CLIENT_SECRET_PREFIX = 'tss_';

type SqlEm = ReturnType<ServiceDeps['db']['em']>;

function newSecret(box: ServiceDeps['box']) {
  const secret = randomToken(CLIENT_SECRET_PREFIX);
  return { clientSecretSealed: box.encrypt(secret), clientSecretHash: sha256Hex(secret) };
}

/** Creates (persists on the next flush of `em`) a new client with every grant type and no redirect URI. */
export function newOidcClient(
  em: SqlEm,
  box: ServiceDeps['box'],
  opts: { projectId: string; name: string; isDefault: boolean; now: Date },
): ProjectOidcClient {
  return em.create(ProjectOidcClientEntity, {
    clientId: randomToken(CLIENT_ID_PREFIX, 18),
    projectId: opts.projectId,
    name: opts.name,
    ...newSecret(box),
    redirectUris: [],
    grantTypes: [...DEFAULT_GRANT_TYPES],
    allowedScopes: [...DEFAULT_ALLOWED_SCOPES],
    isDefault: opts.isDefault,
    isPublic: false,
    createdAt: opts.now,
    updatedAt: opts.now,
  });
}

/** What the identity provider checks a client with (the secret only as its hash). */
export type OidcClientFacts = Pick<
  ProjectOidcClient,
  'clientId' | 'projectId' | 'name' | 'redirectUris' | 'grantTypes' | 'allowedScopes' | 'isPublic' | 'clientSecretHash'
>;

/** What the identity provider needs to know about a client. */
export type ResolvedOidcClient = { client: OidcClientFacts; tenantId: string; secretValid: boolean | null };

export type OidcClientService = ReturnType<typeof createOidcClientService>;

type Change = BroadcastTopics['oidc-clients.changed'];

const CACHE_MAX = 10_000;
/** Belt and braces: a cached client is read again after this long even if no change was announced. */
const CACHE_TTL_MS = 60_000;

/**
 * The clients the identity provider asked for, by client_id. A read that overlapped a change is not
 * stored: `generation` moves on every change, and a read keeps its result only if it did not move.
 */
export function createOidcClientCache() {
  const entries = new Map<string, { facts: OidcClientFacts; tenantId: string; at: number }>();
  let generation = 0;
  /** Whether broadcasts are heard right now (set by `follow`); nothing is cached otherwise. */
  let live: () => boolean = () => false;
  return {
    get(clientId: string): { facts: OidcClientFacts; tenantId: string } | undefined {
      const e = live() ? entries.get(clientId) : undefined;
      if (!e) return undefined;
      if (Date.now() - e.at > CACHE_TTL_MS) {
        entries.delete(clientId);
        return undefined;
      }
      return e;
    },
    /** The generation to hand back to `set` after reading the database. */
    begin: () => generation,
    set(since: number, facts: OidcClientFacts, tenantId: string): void {
      if (since !== generation || !live()) return;
      if (entries.size >= CACHE_MAX) entries.delete(entries.keys().next().value as string);
      entries.set(facts.clientId, {
        facts: Object.freeze({
          ...facts,
          redirectUris: [...facts.redirectUris],
          grantTypes: [...facts.grantTypes],
          allowedScopes: [...facts.allowedScopes],
        }),
        tenantId,
        at: Date.now(),
      });
    },
    /** Drops the clients named, those of a project, or (nothing named) every one. */
    drop(change: Change): void {
      generation++;
      if (!change.clientIds && !change.projectId) return entries.clear();
      for (const id of change.clientIds ?? []) entries.delete(id);
      if (change.projectId)
        for (const [id, e] of entries) if (e.facts.projectId === change.projectId) entries.delete(id);
    },
    /** From now on, cache while `isLive()` says broadcasts are heard. */
    follow(isLive: () => boolean): void {
      generation++;
      entries.clear();
      live = isLive;
    },
    size: () => entries.size,
  };
}

export type OidcClientCache = ReturnType<typeof createOidcClientCache>;

/** Announces a change to every process (delivered when `em`'s transaction commits). */
export async function announceOidcClientChange(em: SqlEm, change: Change): Promise<void> {
  await publishBroadcast(em, 'oidc-clients.changed', change);
}

/** After that transaction committed: this process's caches at once (the others hear the NOTIFY). */
export function oidcClientChangeCommitted(change: Change): void {
  announceLocally('oidc-clients.changed', change);
}

/** Creates the OIDC client service. */
export function createOidcClientService({
  db,
  box,
  projects,
  databaseUrl,
  logger,
}: Pick<ServiceDeps, 'db' | 'box' | 'logger'> & {
  projects: ProjectService;
  /** Where to listen for broadcasts (`start`); without it nothing is cached. */
  databaseUrl?: string;
}) {
  const cache = createOidcClientCache();
  let listener: BroadcastListener | undefined;

  async function getOwned(tenantId: string, projectId: string, clientId: string): Promise<ProjectOidcClient> {
    const project = await projects.getOwned(tenantId, projectId);
    const client = await db.em().findOne(ProjectOidcClientEntity, { clientId, projectId: project.id });
    if (!client) throw errors.notFound('oidc_client', clientId.slice(0, 100));
    return client;
  }

  /** Applies `change` (and announces it to the other processes) in one transaction, then drops it from this process's cache. */
  async function changeClient(clientId: string, change: Partial<ProjectOidcClient>): Promise<ProjectOidcClient> {
    await db.em().transactional(async (em) => {
      await em.nativeUpdate(ProjectOidcClientEntity, { clientId }, { ...change, updatedAt: new Date() });
      await announceOidcClientChange(em, { clientIds: [clientId] });
    });
    cache.drop({ clientIds: [clientId] });
    oidcClientChangeCommitted({ clientIds: [clientId] });
    return (await db.em().findOne(ProjectOidcClientEntity, { clientId })) as ProjectOidcClient;
  }

  return {
    /** The project's clients, oldest first (the default client first). */
    async list(projectId: string): Promise<ProjectOidcClient[]> {
      return await db
        .em()
        .find(ProjectOidcClientEntity, { projectId }, { orderBy: [{ createdAt: 'asc' }, { clientId: 'asc' }] });
    },

    /** Renames a client and/or replaces its redirect URIs, its allowed scopes or whether it is public. */
    async update(
      tenantId: string,
      projectId: string,
      clientId: string,
      input: { name?: unknown; redirectUris?: unknown; public?: unknown; allowedScopes?: unknown },
    ): Promise<ProjectOidcClient> {
      const change: Partial<Pick<ProjectOidcClient, 'name' | 'redirectUris' | 'isPublic' | 'allowedScopes'>> = {};
      if (input.public !== undefined && input.public !== null) {
        if (typeof input.public !== 'boolean') throw errors.validation('public', 'must be true or false');
        change.isPublic = input.public;
      }
      if (input.name !== undefined && input.name !== null) change.name = checkName('name', input.name);
      if (input.redirectUris !== undefined && input.redirectUris !== null)
        change.redirectUris = checkRedirectUris('redirectUris', input.redirectUris);
      if (input.allowedScopes !== undefined && input.allowedScopes !== null)
        change.allowedScopes = checkAllowedScopes('allowedScopes', input.allowedScopes);
      const client = await getOwned(tenantId, projectId, clientId);
      // Admin scopes are only ever issued to client_credentials, which a public client cannot use.
      if ((change.isPublic ?? client.isPublic) && (change.allowedScopes ?? client.allowedScopes).some(isAdminScope)) {
        throw errors.validation(
          'allowedScopes',
          'a public client cannot be granted admin scopes (they are issued only with client_credentials)',
        );
      }
      return await changeClient(client.clientId, change);
    },

    /** Gives the client a new secret; the old one stops working at once. */
    async rotateSecret(tenantId: string, projectId: string, clientId: string): Promise<ProjectOidcClient> {
      const client = await getOwned(tenantId, projectId, clientId);
      return await changeClient(client.clientId, newSecret(box));
    },

    /** The client's secret in clear. */
    revealSecret(client: ProjectOidcClient): string {
      return box.decrypt(client.clientSecretSealed);
    },

    /** For the identity provider: the client by id and, when a secret is given, whether it matches. */
    async resolve(clientId: string, clientSecret?: string | null): Promise<ResolvedOidcClient | null> {
      const check = (client: OidcClientFacts, tenantId: string): ResolvedOidcClient => ({
        client,
        tenantId,
        secretValid:
          typeof clientSecret === 'string' ? safeEqual(sha256Hex(clientSecret), client.clientSecretHash) : null,
      });
      const hit = cache.get(clientId);
      if (hit) return check(hit.facts, hit.tenantId);
      const since = cache.begin();
      const rows = await db.em().execute<
        {
          client_id: string;
          project_id: string;
          name: string;
          redirect_uris: string[];
          grant_types: string[];
          allowed_scopes: string[];
          is_public: boolean;
          client_secret_hash: string;
          tenant_id: string;
        }[]
      >(
        `select c.client_id, c.project_id, c.name, c.redirect_uris, c.grant_types, c.allowed_scopes, c.is_public, c.client_secret_hash, p.tenant_id
           from project_oidc_clients c join projects p on p.id = c.project_id where c.client_id = ?`,
        [clientId],
      );
      const row = rows[0];
      if (!row) return null;
      const facts: OidcClientFacts = {
        clientId: row.client_id,
        projectId: row.project_id,
        name: row.name,
        redirectUris: row.redirect_uris,
        grantTypes: row.grant_types,
        allowedScopes: row.allowed_scopes,
        isPublic: row.is_public,
        clientSecretHash: row.client_secret_hash,
      };
      cache.set(since, facts, row.tenant_id);
      return check(facts, row.tenant_id);
    },

    /** Listens for changes announced by other processes; from then on looked-up clients are cached. */
    async start(): Promise<void> {
      if (!databaseUrl || listener) return;
      const l = await startBroadcastListener({ url: databaseUrl, logger });
      listener = l;
      l.on('oidc-clients.changed', (change) => cache.drop(change));
      // Messages may have been lost while the connection was down: start again from empty.
      l.onReset(() => cache.drop({}));
      cache.follow(l.listening);
    },

    async stop(): Promise<void> {
      cache.follow(() => false);
      await listener?.stop();
      listener = undefined;
    },
  };
}
