// The operator's view of tenants and projects: lists with search, a tenant's plan, and suspension (data kept, every
// call refused with 403 PROJECT_SUSPENDED / TENANT_SUSPENDED). Each change is audited in its transaction and
// broadcast: `plans.changed` empties every plan reader (the front door's suspension check and every limit read
// through it), `credentials.changed` drops every cached credential of the tenant or project, so it applies at once.
import { errors } from '../../../platform/errors.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { ProjectEntity, type Project } from '../entities/index.ts';
import { credentialChangeCommitted, publishCredentialChange } from './credentials.ts';
import { ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX, writeAudit, type OperatorRef } from './operator-audit.ts';
import { publishPlansChanged } from './operator-plans.ts';
import { announceLocally } from '../../../platform/broadcast.ts';
import type { PlanService } from './plans.ts';
import { checkPageSize } from './validation.ts';
import type { ServiceDeps } from './context.ts';

export type OperatorTenantView = {
  id: string;
  email: string;
  name: string;
  planId: string;
  projectCount: number;
  /** Its projects' ids, oldest first: what the usage totals of the other subgraphs are summed over (`@requires`). */
  projectIds: string[];
  suspendedAt: Date | null;
  suspendedReason: string | null;
  createdAt: Date;
};

type TenantRow = {
  id: string;
  email: string;
  name: string;
  plan_id: string;
  project_ids: string[];
  suspended_at: Date | null;
  suspended_reason: string | null;
  created_at: Date;
};

const tenantView = (r: TenantRow): OperatorTenantView => ({
  id: r.id,
  email: r.email,
  name: r.name,
  planId: r.plan_id,
  projectCount: r.project_ids.length,
  projectIds: r.project_ids,
  suspendedAt: r.suspended_at ? new Date(r.suspended_at) : null,
  suspendedReason: r.suspended_reason,
  createdAt: new Date(r.created_at),
});

// The project ids come in the same statement as the row (the count is their number): the totals other subgraphs add
// to an operator's tenant row need them, and a second read per tenant would cost a page of 50 fifty statements.
const TENANT_COLUMNS = `t.id, t.email, t.name, t.plan_id, t.suspended_at, t.suspended_reason, t.created_at,
  array(select p.id::text from projects p where p.tenant_id = t.id order by p.created_at, p.id) as project_ids`;

/** `%` and `_` of a search typed as text match themselves. */
const likeOf = (search: string) => `%${search.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

function checkSearch(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string' || value.length > 200)
    throw errors.validation('search', 'must be text of at most 200 characters');
  return value;
}

function checkReason(value: unknown): string | null {
  if (value === undefined || value === null || value === '') return null;
  if (typeof value !== 'string' || value.length > 500)
    throw errors.validation('reason', 'must be text of at most 500 characters');
  return value;
}

export type OperatorService = ReturnType<typeof createOperatorService>;

/** Tenants and projects as the operator governs them. */
export function createOperatorService({ db, plans }: Pick<ServiceDeps, 'db'> & { plans: PlanService }) {
  const after = async (change: { tenantId?: string; projectId?: string }) => {
    plans.invalidate();
    announceLocally('plans.changed', change);
    await credentialChangeCommitted(change);
  };

  async function tenant(id: string): Promise<OperatorTenantView> {
    if (!isUuid(id)) throw errors.notFound('tenant', String(id).slice(0, 100));
    const [row] = await db.em().execute<TenantRow[]>(`select ${TENANT_COLUMNS} from tenants t where t.id = ?`, [id]);
    if (!row) throw errors.notFound('tenant', id);
    return tenantView(row);
  }

  async function project(id: string): Promise<Project> {
    if (!isUuid(id)) throw errors.notFound('project', String(id).slice(0, 100));
    const found = await db.em().findOne(ProjectEntity, { id });
    if (!found) throw errors.notFound('project', id);
    return found;
  }

  /** Sets or clears the suspension of a tenant (`table` tenants) or a project, audited and announced. */
  async function setSuspension(
    by: OperatorRef,
    kind: 'tenant' | 'project',
    id: string,
    suspend: boolean,
    reason: unknown,
  ): Promise<void> {
    if (!isUuid(id)) throw errors.notFound(kind, String(id).slice(0, 100));
    const why = suspend ? checkReason(reason) : null;
    const table = kind === 'tenant' ? 'tenants' : 'projects';
    const change = kind === 'tenant' ? { tenantId: id } : { projectId: id };
    await db.em().transactional(async (em) => {
      const [row] = await em.execute<{ id: string }[]>(
        suspend
          ? `update ${table} set suspended_at = coalesce(suspended_at, now()), suspended_reason = ? where id = ? returning id`
          : `update ${table} set suspended_at = null, suspended_reason = null where id = ? returning id`,
        suspend ? [why, id] : [id],
      );
      if (!row) throw errors.notFound(kind, id);
      await writeAudit(em, by, `${kind}.${suspend ? 'suspend' : 'resume'}`, kind, id, suspend ? { reason: why } : {});
      await publishPlansChanged(em, change);
      await publishCredentialChange(em, change);
    });
    await after(change);
  }

  return {
    tenant,
    project,

    /** Tenants, oldest first; `search` matches the e-mail address or the name (or is the id). */
    async tenants(opts: { search?: unknown; first?: unknown; after?: unknown }) {
      const first = checkPageSize('first', opts.first, ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX);
      const cursor = decodeTimeCursor('after', opts.after);
      const search = checkSearch(opts.search);
      const where: string[] = [];
      const params: unknown[] = [];
      if (search) {
        where.push(`(t.email ilike ? or t.name ilike ?${isUuid(search) ? ' or t.id = ?' : ''})`);
        params.push(likeOf(search), likeOf(search), ...(isUuid(search) ? [search] : []));
      }
      if (cursor) {
        where.push('(t.created_at, t.id) > (?, ?)');
        params.push(cursor.createdAt, cursor.id);
      }
      const rows = await db.em().execute<TenantRow[]>(
        `select ${TENANT_COLUMNS} from tenants t ${where.length ? `where ${where.join(' and ')}` : ''}
         order by t.created_at, t.id limit ?`,
        [...params, first + 1],
      );
      return timePage(rows, first, tenantView);
    },

    /** Projects, oldest first; `search` matches the name (or is the id), `tenantId` keeps one tenant's. */
    async projects(opts: { search?: unknown; tenantId?: unknown; first?: unknown; after?: unknown }) {
      const first = checkPageSize('first', opts.first, ADMIN_PAGE_DEFAULT, ADMIN_PAGE_MAX);
      const cursor = decodeTimeCursor('after', opts.after);
      const search = checkSearch(opts.search);
      const where: Record<string, unknown>[] = [];
      if (opts.tenantId !== undefined && opts.tenantId !== null && opts.tenantId !== '') {
        if (!isUuid(opts.tenantId)) throw errors.validation('tenant_id', 'must be a tenant id (a UUID)');
        where.push({ tenantId: opts.tenantId });
      }
      if (search)
        where.push(
          isUuid(search)
            ? { $or: [{ id: search }, { name: { $ilike: likeOf(search) } }] }
            : { name: { $ilike: likeOf(search) } },
        );
      if (cursor)
        where.push({
          $or: [{ createdAt: { $gt: cursor.createdAt } }, { createdAt: cursor.createdAt, id: { $gt: cursor.id } }],
        });
      const rows = await db.em().find(ProjectEntity, where.length ? { $and: where } : {}, {
        orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
        limit: first + 1,
      });
      return timePage(rows, first, (row) => row);
    },

    /** Moves a tenant to another plan. Projects it has beyond the new plan's count stay; only new ones are refused. */
    async setTenantPlan(by: OperatorRef, id: string, planId: unknown): Promise<OperatorTenantView> {
      if (typeof planId !== 'string' || planId === '') throw errors.validation('plan_id', 'is required');
      if (!isUuid(id)) throw errors.notFound('tenant', String(id).slice(0, 100));
      await db.em().transactional(async (em) => {
        const [plan] = await em.execute<{ id: string }[]>('select id from plans where id = ? for share', [planId]);
        if (!plan) throw errors.notFound('plan', planId.slice(0, 100));
        const [row] = await em.execute<{ from: string }[]>(
          'update tenants t set plan_id = ?, updated_at = now() from tenants old where t.id = old.id and t.id = ? returning old.plan_id as "from"',
          [planId, id],
        );
        if (!row) throw errors.notFound('tenant', id);
        await writeAudit(em, by, 'tenant.plan', 'tenant', id, { plan_id: planId, previous_plan_id: row.from });
        await publishPlansChanged(em, { tenantId: id });
      });
      plans.invalidate();
      announceLocally('plans.changed', { tenantId: id });
      return await tenant(id);
    },

    async suspendTenant(by: OperatorRef, id: string, reason: unknown) {
      await setSuspension(by, 'tenant', id, true, reason);
      return await tenant(id);
    },
    async resumeTenant(by: OperatorRef, id: string) {
      await setSuspension(by, 'tenant', id, false, undefined);
      return await tenant(id);
    },
    async suspendProject(by: OperatorRef, id: string, reason: unknown) {
      await setSuspension(by, 'project', id, true, reason);
      return await project(id);
    },
    async resumeProject(by: OperatorRef, id: string) {
      await setSuspension(by, 'project', id, false, undefined);
      return await project(id);
    },

    /** Whether the tenant is suspended (sign-in and tenant tokens are refused then). */
    async tenantSuspended(id: string): Promise<boolean> {
      const [row] = await db
        .em()
        .execute<{ s: boolean }[]>('select suspended_at is not null as s from tenants where id = ?', [id]);
      return row?.s === true;
    },
  };
}
