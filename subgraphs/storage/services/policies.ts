// ACL policies of a project: list, create, delete, and the lookup every access check starts from.
import crypto from 'node:crypto';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import { errors } from '../../../platform/errors.ts';
import { decodeTimeCursor, timePage } from '../../../platform/cursor.ts';
import { isUuid } from '../../../platform/ids.ts';
import { StoragePolicyEntity, type StoragePolicy } from '../entities/index.ts';
import { checkFirst, checkPolicy } from './names.ts';

export const MAX_POLICIES_PER_PROJECT = 200;

export type PolicyService = ReturnType<typeof createPolicyService>;

export function createPolicyService({ db }: { db: SubgraphDatabase }) {
  return {
    /** Every policy of a project (access checks read them all: a project has at most a few hundred). */
    async all(projectId: string): Promise<StoragePolicy[]> {
      return await db.em().find(StoragePolicyEntity, { projectId }, { orderBy: { createdAt: 'asc', id: 'asc' } });
    },

    /** One page, oldest first. */
    async page(
      projectId: string,
      args: { first?: number | null; after?: string | null },
    ): Promise<{ items: StoragePolicy[]; nextCursor: string | null }> {
      const first = checkFirst(args.first);
      const where: Record<string, unknown> = { projectId };
      const c = decodeTimeCursor('after', args.after);
      if (c) {
        where.$or = [{ createdAt: { $gt: c.createdAt } }, { createdAt: c.createdAt, id: { $gt: c.id } }];
      }
      const rows = await db
        .em()
        .find(StoragePolicyEntity, where, { orderBy: { createdAt: 'asc', id: 'asc' }, limit: first + 1 });
      return timePage(rows, first, (row) => row);
    },

    /** Creates a policy; CONFLICT when the name is taken. */
    async create(projectId: string, raw: Parameters<typeof checkPolicy>[0]): Promise<StoragePolicy> {
      const input = checkPolicy(raw);
      return await db.em().transactional(async (em) => {
        await em.execute(`select pg_advisory_xact_lock(hashtext('storage-policies:' || ?))`, [projectId]);
        const count = await em.count(StoragePolicyEntity, { projectId });
        if (count >= MAX_POLICIES_PER_PROJECT)
          throw errors.conflict(`A project may have at most ${MAX_POLICIES_PER_PROJECT} storage policies`);
        if (await em.findOne(StoragePolicyEntity, { projectId, name: input.name })) {
          throw errors.conflict(`A policy named "${input.name}" already exists`, { field: 'name' });
        }
        const policy = em.create(StoragePolicyEntity, {
          id: crypto.randomUUID(),
          projectId,
          ...input,
          createdAt: new Date(),
        });
        await em.flush();
        return policy;
      });
    },

    /** Deletes a policy; NOT_FOUND when unknown (also for ids that are not UUIDs). */
    async remove(projectId: string, id: unknown): Promise<void> {
      if (id === undefined || id === null || id === '')
        throw errors.validation('id', 'is required (as ?id= or in the JSON body)');
      if (!isUuid(id)) throw errors.notFound('policy', String(id).slice(0, 100));
      const n = await db.em().nativeDelete(StoragePolicyEntity, { id, projectId });
      if (n === 0) throw errors.notFound('policy', id);
    },

    /** Removes every policy of a project (project deleted). */
    async purge(projectId: string): Promise<void> {
      await db.em().nativeDelete(StoragePolicyEntity, { projectId });
    },
  };
}
