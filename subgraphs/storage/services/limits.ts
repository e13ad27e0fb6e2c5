// Plan limits of a project as storage knows them, and the bytes a project uses against them.
// Plans belong to tenant management: the router hands their limits to storage through federation
// (`@requires` on Project.storageLimits / storageUsage); storage keeps the last copy it was handed.
import type { Config } from '../../../platform/config.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import type { SubgraphDatabase } from '../../../platform/database.ts';
import { AppError } from '../../../platform/errors.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../../../platform/internal-operations.ts';

/** A plan's storage limits; null: no limit. */
export type PlanLimits = { maxStorageBytes: number | null; maxUploadBytes: number | null };
const numberOrNull = (v: string | number | null) => (v === null ? null : Number(v));
type Sql = { execute: (sql: string, params?: unknown[]) => Promise<unknown> };

export type LimitService = ReturnType<typeof createLimitService>;

/**
 * How long an upload may still be streaming: no request lasts longer than TESSERA_REQUEST_TIMEOUT_MS (a day when it
 * is off), plus a minute. An `uploading` row older than this is one whose process died: its reservation no longer
 * counts, and only then may the sweep remove it (a slow upload outliving TESSERA_STORAGE_PENDING_TTL is still alive).
 */
export function uploadLifetimeSeconds(config: Pick<Config, 'requestTimeoutMs'>): number {
  return config.requestTimeoutMs > 0 ? Math.ceil(config.requestTimeoutMs / 1000) + 60 : 86_400;
}

/** Limits younger than this are used as they are; older ones are asked for again first. */
const FRESH_MS = 30_000;

export function createLimitService({
  db,
  config,
  router,
}: {
  db: SubgraphDatabase;
  config: Config;
  router?: RouterClient;
}) {
  const read = async (projectId: string, sql: Sql) =>
    (
      (await sql.execute(
        'select max_storage_bytes, max_upload_bytes, updated_at from storage_project_limits where project_id = ?',
        [projectId],
      )) as {
        max_storage_bytes: string | null;
        max_upload_bytes: string | null;
        updated_at: Date | string;
      }[]
    )[0];
  const notFound = (projectId: string) =>
    new AppError('NOT_FOUND', `project ${projectId} not found`, { resource: 'project', id: projectId });
  return {
    /**
     * The project's plan limits, asked of the router again when the copy is missing or older than 30 s.
     * NOT_FOUND when tenant management knows no such project.
     */
    async current(projectId: string, requestId: string): Promise<PlanLimits> {
      let row = await read(projectId, db.em());
      if ((!row || Date.now() - new Date(row.updated_at).getTime() > FRESH_MS) && router) {
        // Asking for the field makes the router fetch the plan from tenant management and hand it to
        // Project.storageLimits, whose resolver remembers it (see resolvers/index.ts).
        await callInternal(
          router,
          INTERNAL_OPERATIONS.storageLimitsRefresh,
          { projectId },
          { requestId, principal: { kind: 'internal' } },
        ).catch((err: unknown) => {
          // NOT_FOUND: tenant management knows no such project (answered below, from what storage keeps).
          if (err instanceof AppError && err.code === 'NOT_FOUND') return;
          if (!(err instanceof AppError)) throw err;
          throw new AppError('SERVICE_UNAVAILABLE', `The plan limits of the project could not be read: ${err.message}`);
        });
        row = await read(projectId, db.em());
      }
      if (!row) throw notFound(projectId);
      return {
        maxStorageBytes: numberOrNull(row.max_storage_bytes),
        maxUploadBytes: numberOrNull(row.max_upload_bytes),
      };
    },
    /** Stores the plan limits the router handed over. */
    async remember(projectId: string, limits: PlanLimits): Promise<void> {
      await db.em().execute(
        `insert into storage_project_limits (project_id, max_storage_bytes, max_upload_bytes, updated_at) values (?, ?, ?, now())
         on conflict (project_id) do update set max_storage_bytes = excluded.max_storage_bytes, max_upload_bytes = excluded.max_upload_bytes, updated_at = now()`,
        [
          projectId,
          limits.maxStorageBytes === null ? null : Math.floor(limits.maxStorageBytes),
          limits.maxUploadBytes === null ? null : Math.floor(limits.maxUploadBytes),
        ],
      );
    },
    /** Forgets a deleted project's limits. */
    async forget(projectId: string): Promise<void> {
      await db.em().execute('delete from storage_project_limits where project_id = ?', [projectId]);
    },
    /** The plan limits last handed over; NOT_FOUND when storage never learned them (no such project). */
    async of(projectId: string, sql: Sql = db.em()): Promise<PlanLimits> {
      const row = await read(projectId, sql);
      if (!row) throw notFound(projectId);
      return {
        maxStorageBytes: numberOrNull(row.max_storage_bytes),
        maxUploadBytes: numberOrNull(row.max_upload_bytes),
      };
    },
    /**
     * Bytes counted against the quota: ready and pending objects, and what uploads still streaming reserved (all but
     * `except`'s). An upload cannot stream longer than a request may last (TESSERA_REQUEST_TIMEOUT_MS, else a day),
     * so an older reservation is one whose process died: it no longer counts (the sweep removes its row).
     */
    async used(projectId: string, sql: Sql = db.em(), except?: string): Promise<number> {
      const reservedSeconds = uploadLifetimeSeconds(config);
      const rows = (await sql.execute(
        `select coalesce(sum(size) filter (where status in ('pending', 'ready')), 0)
              + coalesce(sum(max_bytes) filter (where status = 'uploading' and id <> ?::uuid and created_at > now() - make_interval(secs => ?)), 0) as bytes
           from storage_objects where project_id = ?`,
        [except ?? '00000000-0000-0000-0000-000000000000', reservedSeconds, projectId],
      )) as { bytes: string }[];
      return Number(rows[0]!.bytes);
    },
    /** Bytes left before the quota (never negative); null without a quota. */
    remaining(limits: PlanLimits, used: number): number | null {
      return limits.maxStorageBytes === null ? null : Math.max(0, limits.maxStorageBytes - used);
    },
    /** The per-upload limit: the plan's or the server's (TESSERA_STORAGE_MAX_UPLOAD_BYTES), the smaller. */
    maxUpload(limits: PlanLimits): number {
      return Math.min(limits.maxUploadBytes ?? Infinity, config.storageMaxUploadBytes);
    },
  };
}
