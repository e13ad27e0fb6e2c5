// Projects of a tenant: create (within the plan's limit, with a default OIDC client), list, rename,
// delete, key regeneration (the secret API key and the publishable key), and the key check the router runs on
// every request.
import crypto from 'node:crypto';
import { AppError, errors } from '../../../platform/errors.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { publishEvent } from '../../../platform/events.ts';
import { ProjectEntity, type Project } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import { randomToken, sha256Hex } from '../../../platform/crypto.ts';
import { announceOidcClientChange, newOidcClient, oidcClientChangeCommitted } from './oidc-clients.ts';
import type { PlanService } from './plans.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';
import { checkName, checkPageSize } from './validation.ts';

const API_KEY_PREFIX = 'tsk_';
const PUBLISHABLE_KEY_PREFIX = 'tpk_';
const SHOWN_PREFIX_LENGTH = 12;
export const PAGE_DEFAULT = 20;
export const PAGE_MAX = 100;

export type ProjectPage = { items: Project[]; nextCursor: string | null };
export type ProjectService = ReturnType<typeof createProjectService>;

function newApiKey() {
  const apiKey = randomToken(API_KEY_PREFIX);
  return { apiKey, apiKeyHash: sha256Hex(apiKey), apiKeyPrefix: apiKey.slice(0, SHOWN_PREFIX_LENGTH) };
}

/** A publishable key: shipped in web pages and apps, so it is a credential of the project but no secret of it. */
function newPublishableKey() {
  const key = randomToken(PUBLISHABLE_KEY_PREFIX);
  return { key, publishableKeyHash: sha256Hex(key), publishableKeyPrefix: key.slice(0, SHOWN_PREFIX_LENGTH) };
}

type ProjectRow = {
  id: string;
  tenant_id: string;
  name: string;
  api_key_sealed: string;
  api_key_hash: string;
  api_key_prefix: string;
  created_at: Date | string;
  updated_at: Date | string;
  publishable_key_sealed: string | null;
  publishable_key_hash: string | null;
  publishable_key_prefix: string | null;
  suspended_at: Date | string | null;
  suspended_reason: string | null;
};

const PROJECT_COLUMNS =
  'id, tenant_id, name, api_key_sealed, api_key_hash, api_key_prefix, publishable_key_sealed, publishable_key_hash, publishable_key_prefix, created_at, updated_at, suspended_at, suspended_reason';

/** A project row read with plain SQL (the per-request reads: an ORM findOne costs several times the query). */
function projectOf(r: ProjectRow): Project {
  return {
    id: r.id,
    tenantId: r.tenant_id,
    name: r.name,
    apiKeySealed: r.api_key_sealed,
    apiKeyHash: r.api_key_hash,
    apiKeyPrefix: r.api_key_prefix,
    publishableKeySealed: r.publishable_key_sealed,
    publishableKeyHash: r.publishable_key_hash,
    publishableKeyPrefix: r.publishable_key_prefix,
    createdAt: new Date(r.created_at),
    updatedAt: new Date(r.updated_at),
    // The owner sees its project's suspension (Project.suspendedAt) as the operator does.
    suspendedAt: r.suspended_at ? new Date(r.suspended_at) : null,
    suspendedReason: r.suspended_reason,
  } as Project;
}

/** Creates the project service. */
export function createProjectService({ db, box, plans }: Pick<ServiceDeps, 'db' | 'box'> & { plans: PlanService }) {
  const notFound = (id: string) => errors.notFound('project', id.slice(0, 100));

  /** The project when `tenantId` owns it; NOT_FOUND otherwise (also for ids that are not UUIDs). */
  async function getOwned(tenantId: string, id: string): Promise<Project> {
    if (!isUuid(id)) throw notFound(id);
    const [row] = await db
      .em()
      .execute<ProjectRow[]>(`select ${PROJECT_COLUMNS} from projects where id = ? and tenant_id = ?`, [id, tenantId]);
    if (!row) throw notFound(id);
    return projectOf(row);
  }

  return {
    getOwned,

    /** Creates a project and its default OIDC client; PLAN_LIMIT_REACHED past the plan's project count. */
    async create(tenantId: string, input: { name: unknown }): Promise<Project> {
      const name = checkName('name', input.name);
      return await db.em().transactional(async (em) => {
        // Locking the tenant row serialises concurrent creates, so the count below cannot go stale.
        const [tenant] = await em.execute<{ plan_id: string }[]>(
          'select plan_id from tenants where id = ? for update',
          [tenantId],
        );
        if (!tenant) throw errors.unauthenticated('The account no longer exists');
        const plan = await plans.get(tenant.plan_id);
        const count = await em.count(ProjectEntity, { tenantId });
        if (plan.maxProjects !== null && plan.maxProjects !== undefined && count >= plan.maxProjects) {
          throw new AppError('PLAN_LIMIT_REACHED', `The ${plan.name} plan allows ${plan.maxProjects} projects`, {
            limit: 'max_projects',
            max: plan.maxProjects,
            plan: plan.id,
          });
        }
        const now = new Date();
        const { apiKey, ...key } = newApiKey();
        const { key: publishable, ...pk } = newPublishableKey();
        const project = em.create(ProjectEntity, {
          id: crypto.randomUUID(),
          tenantId,
          name,
          apiKeySealed: box.encrypt(apiKey),
          ...key,
          publishableKeySealed: box.encrypt(publishable),
          ...pk,
          createdAt: now,
          updatedAt: now,
        });
        // No ORM relations between the tables: flush the project first so the client's foreign key holds.
        await em.flush();
        newOidcClient(em, box, { projectId: project.id, name: 'Default client', isDefault: true, now });
        // Other domains (the project's database schema, storage, functions) set themselves up from this event.
        await publishEvent(em, 'project.created', { projectId: project.id, tenantId, name });
        return project;
      });
    },

    /** One page of the tenant's projects, oldest first. */
    async list(tenantId: string, opts: { first?: unknown; after?: unknown }): Promise<ProjectPage> {
      const first = checkPageSize('first', opts.first, PAGE_DEFAULT, PAGE_MAX);
      const after = decodeTimeCursor('after', opts.after);
      const where = after
        ? {
            tenantId,
            $or: [{ createdAt: { $gt: after.createdAt } }, { createdAt: after.createdAt, id: { $gt: after.id } }],
          }
        : { tenantId };
      const rows = await db
        .em()
        .find(ProjectEntity, where, { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }], limit: first + 1 });
      return timePage(rows, first, (row) => row);
    },

    async rename(tenantId: string, id: string, input: { name: unknown }): Promise<Project> {
      const name = checkName('name', input.name);
      const project = await getOwned(tenantId, id);
      const em = db.em();
      await em.nativeUpdate(ProjectEntity, { id: project.id }, { name, updatedAt: new Date() });
      return (await em.findOne(ProjectEntity, { id: project.id })) as Project;
    },

    /** Deletes the project with its OIDC clients and publications. */
    async remove(tenantId: string, id: string): Promise<void> {
      if (!isUuid(id)) throw notFound(id);
      await db.em().transactional(async (em) => {
        const deleted = await em.nativeDelete(ProjectEntity, { id, tenantId });
        if (deleted === 0) throw notFound(id);
        await publishEvent(em, 'project.deleted', { projectId: id, tenantId });
        // Its OIDC clients went with it: every process drops them from its cache (this one right below).
        await announceOidcClientChange(em, { projectId: id });
        // Its API key stops working at once in every process (cached credentials dropped).
        await publishCredentialChange(em, { projectId: id });
      });
      oidcClientChangeCommitted({ projectId: id });
      await credentialChangeCommitted({ projectId: id });
    },

    /** Replaces the API key; the old one is refused from the next request on. */
    async regenerateKey(tenantId: string, id: string): Promise<Project> {
      const project = await getOwned(tenantId, id);
      const { apiKey, ...key } = newApiKey();
      // Every cached credential of the project goes (by project, not by the old key's hash: a concurrent
      // regeneration may have replaced the key this request read).
      await db.em().transactional(async (em) => {
        await em.nativeUpdate(
          ProjectEntity,
          { id: project.id },
          { apiKeySealed: box.encrypt(apiKey), ...key, updatedAt: new Date() },
        );
        await publishCredentialChange(em, { projectId: project.id });
      });
      await credentialChangeCommitted({ projectId: project.id });
      return (await db.em().findOne(ProjectEntity, { id: project.id })) as Project;
    },

    /** Replaces the publishable key; the old one is refused from the next request on (web pages must ship the new one). */
    async regeneratePublishableKey(tenantId: string, id: string): Promise<Project> {
      const project = await getOwned(tenantId, id);
      const { key, ...pk } = newPublishableKey();
      await db.em().transactional(async (em) => {
        await em.nativeUpdate(
          ProjectEntity,
          { id: project.id },
          { publishableKeySealed: box.encrypt(key), ...pk, updatedAt: new Date() },
        );
        await publishCredentialChange(em, { projectId: project.id });
      });
      await credentialChangeCommitted({ projectId: project.id });
      return (await db.em().findOne(ProjectEntity, { id: project.id })) as Project;
    },

    /**
     * The project's publishable key in clear. Projects made before publishable keys existed get theirs now (the
     * first reader makes it; a concurrent one reads the winner's).
     */
    async revealPublishableKey(project: Project): Promise<string> {
      if (project.publishableKeySealed) return box.decrypt(project.publishableKeySealed);
      const { key, ...pk } = newPublishableKey();
      await db
        .em()
        .execute(
          'update projects set publishable_key_sealed = ?, publishable_key_hash = ?, publishable_key_prefix = ? where id = ? and publishable_key_sealed is null',
          [box.encrypt(key), pk.publishableKeyHash, pk.publishableKeyPrefix, project.id],
        );
      const [row] = await db
        .em()
        .execute<ProjectRow[]>(`select ${PROJECT_COLUMNS} from projects where id = ?`, [project.id]);
      if (!row?.publishable_key_sealed) throw notFound(project.id);
      Object.assign(project, projectOf(row));
      return box.decrypt(row.publishable_key_sealed);
    },

    /** The project by id, whoever asks (entity references); null when unknown or not a UUID. */
    async load(id: unknown): Promise<Project | null> {
      if (!isUuid(id)) return null;
      const [row] = await db.em().execute<ProjectRow[]>(`select ${PROJECT_COLUMNS} from projects where id = ?`, [id]);
      return row ? projectOf(row) : null;
    },

    /** The project's API key in clear. */
    revealApiKey(project: Project): string {
      return box.decrypt(project.apiKeySealed);
    },

    /**
     * Resolves a project key (the secret API key or the publishable key, told apart by prefix) to its project with
     * one indexed read; INVALID_API_KEY when unknown.
     */
    async authenticate(
      apiKey: string,
    ): Promise<{ projectId: string; tenantId: string; kind: 'project' | 'publishable' }> {
      if (apiKey.length > 200) throw errors.invalidApiKey();
      const kind = apiKey.startsWith(API_KEY_PREFIX)
        ? 'project'
        : apiKey.startsWith(PUBLISHABLE_KEY_PREFIX)
          ? 'publishable'
          : undefined;
      if (!kind) throw errors.invalidApiKey();
      const column = kind === 'project' ? 'api_key_hash' : 'publishable_key_hash';
      const rows = await db
        .em()
        .execute<{ id: string; tenant_id: string }[]>(`select id, tenant_id from projects where ${column} = ?`, [
          sha256Hex(apiKey),
        ]);
      if (rows.length === 0) throw errors.invalidApiKey();
      return { projectId: rows[0].id, tenantId: rows[0].tenant_id, kind };
    },
  };
}
