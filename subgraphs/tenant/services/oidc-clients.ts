// OAuth 2.0 / OIDC clients of a project's identity provider. The secret is sealed for the owner to
// read back and hashed (SHA-256) for the identity provider's credential check.
// The identity provider asks for a client on every /token, /introspect and /revocation request, so the
// clients it asked for are kept in memory (what the check needs, the secret only as its stored hash).
// Every change (secret rotation, settings, the project's deletion) drops them at once: in this process
// right after its commit (announceLocally), in every other one through the `oidc-clients.changed`
// broadcast sent in the same transaction (the identity subgraph's own client cache hears it too). Nothing
// is trusted while the broadcast connection is down, a reconnection empties the cache, and nothing is kept
// longer than a minute. Until `start()` listens for broadcasts, nothing is cached.
// A project has up to MAX_OIDC_CLIENTS_PER_PROJECT clients and never fewer than one (DESIGN §5): any client may be
// deleted, the one made with the project too, except the last. A deleted client's secret stops working at once (the
// broadcast above) and the identity provider ends what it issued to it (the platform event `oidc-client.deleted`).
import { AppError, errors } from '../../../platform/errors.ts';
import { publishEvent } from '../../../platform/events.ts';
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
/** The grant types /token knows (the seed's four); a client may use any non-empty subset. */
export const GRANT_TYPES: readonly string[] = DEFAULT_GRANT_TYPES;
/** Clients per project (not a plan limit: every plan gets the same; enough for web, mobile, server and tests apps). */
export const MAX_OIDC_CLIENTS_PER_PROJECT = 20;
/** Scopes a new client may be issued: the OpenID Connect ones and role scopes. API and admin scopes are granted by the tenant. */
export const DEFAULT_ALLOWED_SCOPES = ['openid', 'profile', 'email', 'phone', 'offline_access', 'role:*'];
const CLIENT_ID_PREFIX = 'tsc_';
const CLIENT_SECRET_PREFIX = 'tss_';

type SqlEm = ReturnType<ServiceDeps['db']['em']>;

function newSecret(box: ServiceDeps['box']) {
  const secret = randomToken(CLIENT_SECRET_PREFIX);
  return { clientSecretSealed: box.encrypt(secret), clientSecretHash: sha256Hex(secret) };
}

/** A list of grant types among GRANT_TYPES: non-empty, no duplicates (VALIDATION_FAILED naming the field otherwise). */
export function checkGrantTypes(field: string, value: unknown): string[] {
  if (!Array.isArray(value) || value.length === 0)
    throw errors.validation(field, `must be a non-empty list among ${GRANT_TYPES.join(', ')}`);
  const out: string[] = [];
  for (const [i, g] of value.entries()) {
    if (typeof g !== 'string' || !GRANT_TYPES.includes(g))
      throw errors.validation(`${field}[${i}]`, `is not a grant type; grant types are ${GRANT_TYPES.join(', ')}`);
    if (!out.includes(g)) out.push(g);
  }
  return out;
}

/** What a client's settings may be, checked the same at creation and at every update. */
type Settings = Pick<ProjectOidcClient, 'name' | 'redirectUris' | 'grantTypes' | 'allowedScopes' | 'isPublic'>;

/** The fields of `input` that are given, each checked on its own (VALIDATION_FAILED naming the field). */
function checkSettings(input: ClientInput): Partial<Settings> {
  const out: Partial<Settings> = {};
  const given = (v: unknown) => v !== undefined && v !== null;
  if (given(input.public)) {
    if (typeof input.public !== 'boolean') throw errors.validation('public', 'must be true or false');
    out.isPublic = input.public;
  }
  if (given(input.name)) out.name = checkName('name', input.name);
  if (given(input.redirectUris)) out.redirectUris = checkRedirectUris('redirectUris', input.redirectUris);
  if (given(input.grantTypes)) out.grantTypes = checkGrantTypes('grantTypes', input.grantTypes);
  if (given(input.allowedScopes)) out.allowedScopes = checkAllowedScopes('allowedScopes', input.allowedScopes);
  return out;
}

/** The rules between fields, on the settings the client would have. */
function checkCombination(s: Settings): void {
  // A public client has no secret to prove itself with: client_credentials would hand tokens to anyone.
  if (s.isPublic && s.grantTypes.includes('client_credentials'))
    throw errors.validation('grantTypes', 'a public client cannot use client_credentials (it has no secret)');
  // Admin scopes are only ever issued to client_credentials, which a public client cannot use.
  if (s.isPublic && s.allowedScopes.some(isAdminScope))
    throw errors.validation(
      'allowedScopes',
      'a public client cannot be granted admin scopes (they are issued only with client_credentials)',
    );
}

/** A client's settings as the tenant gives them (GraphQL input; REST bodies arrive here the same). */
export type ClientInput = {
  name?: unknown;
  redirectUris?: unknown;
  grantTypes?: unknown;
  allowedScopes?: unknown;
  public?: unknown;
};

/** Creates (persists on the next flush of `em`) a new client with every grant type and no redirect URI. */
export function newOidcClient(
  em: SqlEm,
  box: ServiceDeps['box'],
  opts: { projectId: string; name: string; isDefault: boolean; now: Date; settings?: Partial<Settings> },
): ProjectOidcClient {
  return em.create(ProjectOidcClientEntity, {
    clientId: randomToken(CLIENT_ID_PREFIX, 18),
    projectId: opts.projectId,
    name: opts.name,
    ...newSecret(box),
    redirectUris: opts.settings?.redirectUris ?? [],
    grantTypes: opts.settings?.grantTypes ?? [...DEFAULT_GRANT_TYPES],
    allowedScopes: opts.settings?.allowedScopes ?? [...DEFAULT_ALLOWED_SCOPES],
    isDefault: opts.isDefault,
    isPublic: opts.settings?.isPublic ?? false,
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

    /**
     * A new client: `name` required; grant types default to all four (`client_credentials` left out for a public
     * client), scopes to DEFAULT_ALLOWED_SCOPES. PLAN_LIMIT_REACHED past MAX_OIDC_CLIENTS_PER_PROJECT.
     */
    async create(tenantId: string, projectId: string, input: ClientInput): Promise<ProjectOidcClient> {
      if (input.name === undefined || input.name === null) throw errors.validation('name', 'is required');
      const given = checkSettings(input);
      const isPublic = given.isPublic ?? false;
      const settings: Settings = {
        name: given.name!,
        isPublic,
        redirectUris: given.redirectUris ?? [],
        grantTypes: given.grantTypes ?? DEFAULT_GRANT_TYPES.filter((g) => !isPublic || g !== 'client_credentials'),
        allowedScopes: given.allowedScopes ?? [...DEFAULT_ALLOWED_SCOPES],
      };
      checkCombination(settings);
      const project = await projects.getOwned(tenantId, projectId);
      return await db.em().transactional(async (em) => {
        // Locking the project row serialises concurrent creates, so the count below cannot go stale.
        await em.execute('select id from projects where id = ? for update', [project.id]);
        const count = await em.count(ProjectOidcClientEntity, { projectId: project.id });
        if (count >= MAX_OIDC_CLIENTS_PER_PROJECT)
          throw new AppError(
            'PLAN_LIMIT_REACHED',
            `A project may have at most ${MAX_OIDC_CLIENTS_PER_PROJECT} OIDC clients`,
            { limit: 'max_oidc_clients', max: MAX_OIDC_CLIENTS_PER_PROJECT },
          );
        const client = newOidcClient(em, box, {
          projectId: project.id,
          name: settings.name,
          isDefault: false,
          now: new Date(),
          settings,
        });
        await em.flush();
        return client;
      });
    },

    /**
     * Changes a client's name, redirect URIs, grant types, allowed scopes or whether it is public; omitted fields
     * stay. Checked as at creation, on the settings the client would have.
     */
    async update(
      tenantId: string,
      projectId: string,
      clientId: string,
      input: ClientInput,
    ): Promise<ProjectOidcClient> {
      const change = checkSettings(input);
      const client = await getOwned(tenantId, projectId, clientId);
      // Made public with no grant types given: it loses client_credentials (it has no secret to use it with),
      // as a public client made at creation has it left out. Given explicitly with it: refused below.
      if (change.isPublic === true && !client.isPublic && change.grantTypes === undefined)
        change.grantTypes = client.grantTypes.filter((g) => g !== 'client_credentials');
      if (change.grantTypes?.length === 0)
        throw errors.validation('grantTypes', 'a public client needs a grant type other than client_credentials');
      checkCombination({ ...client, ...change });
      return await changeClient(client.clientId, change);
    },

    /**
     * Deletes a client (the default one too) unless it is the project's last: its secret stops working at once in
     * every process, and the identity provider ends its sessions, codes and tokens (`oidc-client.deleted`).
     */
    async remove(tenantId: string, projectId: string, clientId: string): Promise<void> {
      const client = await getOwned(tenantId, projectId, clientId);
      const change = { clientIds: [client.clientId] };
      await db.em().transactional(async (em) => {
        await em.execute('select id from projects where id = ? for update', [client.projectId]);
        const count = await em.count(ProjectOidcClientEntity, { projectId: client.projectId });
        if (count <= 1)
          throw errors.conflict('A project keeps at least one OIDC client: create another before deleting this one', {
            resource: 'oidc_client',
            id: client.clientId,
          });
        const deleted = await em.nativeDelete(ProjectOidcClientEntity, { clientId: client.clientId });
        if (deleted === 0) throw errors.notFound('oidc_client', client.clientId);
        await announceOidcClientChange(em, change);
        await publishEvent(em, 'oidc-client.deleted', { projectId: client.projectId, clientId: client.clientId });
      });
      cache.drop(change);
      oidcClientChangeCommitted(change);
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
