// Realtime publication switches: which tables of a project's database stream their changes. A switch is turned on only
// for a table the project's database has (the data domain answers which, `_projectTables`): a name typed wrong would
// otherwise be accepted and never stream. Turning off is allowed for any switch that exists (its table may be gone).
import crypto from 'node:crypto';
import { errors } from '../../../platform/errors.ts';
import { publishEvent } from '../../../platform/events.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../../platform/internal-operations.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import { ProjectPublicationEntity, type ProjectPublication } from '../entities/index.ts';
import type { ServiceDeps } from './context.ts';
import type { ProjectService } from './projects.ts';
import { checkTableName } from './validation.ts';

export type PublicationService = ReturnType<typeof createPublicationService>;

/** Creates the publication service. */
export function createPublicationService({
  db,
  projects,
  router,
}: Pick<ServiceDeps, 'db'> & { projects: ProjectService; router: RouterClient }) {
  /** VALIDATION_FAILED naming the table unless the project's database has it. */
  async function checkExists(projectId: string, table: string, requestId: string): Promise<void> {
    const { _projectTables: tables } = await callInternal(
      router,
      INTERNAL_OPERATIONS.projectTables,
      { projectId },
      { requestId, principal: { kind: 'internal' } },
    );
    if (!tables.includes(table)) throw errors.validation('table', `the project's database has no table "${table}"`);
  }

  return {
    /** Every table with a publication setting, by name. */
    async list(projectId: string): Promise<ProjectPublication[]> {
      return await db.em().find(ProjectPublicationEntity, { projectId }, { orderBy: { tableName: 'asc' } });
    },

    /** Turns realtime on or off for a table (created on first use). */
    async set(
      tenantId: string,
      projectId: string,
      input: { table: unknown; enabled: unknown },
      requestId: string,
    ): Promise<ProjectPublication> {
      const tableName = checkTableName('table', input.table);
      const enabled = input.enabled === true;
      const project = await projects.getOwned(tenantId, projectId);
      const known = await db.em().count(ProjectPublicationEntity, { projectId: project.id, tableName });
      if (enabled || known === 0) await checkExists(project.id, tableName, requestId);
      const now = new Date();
      const em = db.em();
      await em.transactional(async (tx) => {
        await tx.execute(
          `insert into project_publications (id, project_id, table_name, enabled, created_at, updated_at)
           values (?, ?, ?, ?, ?, ?)
           on conflict (project_id, table_name) do update set enabled = excluded.enabled, updated_at = excluded.updated_at`,
          [crypto.randomUUID(), project.id, tableName, enabled, now, now],
        );
        // The data domain starts or stops streaming the table's changes from this event.
        await publishEvent(tx, 'publication.changed', { projectId: project.id, table: tableName, enabled });
      });
      return (await em.findOne(ProjectPublicationEntity, { projectId: project.id, tableName })) as ProjectPublication;
    },
  };
}
