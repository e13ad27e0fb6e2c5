// Changing a plan's limits in a test as the operator would: the row in the platform database, then the
// `plans.changed` broadcast every process listens for (platform/plan-limits.ts empties its cache on it).
import pg from 'pg';
import { configureBroadcasts, publishBroadcastNow } from '../../platform/broadcast.ts';
import { TEST_SECRET } from './platform.ts';

/** Plan limit columns (snake_case, as in `plans` and the REST API) → value; null: no limit. */
export type PlanLimitChange = Partial<
  Record<
    | 'max_projects'
    | 'max_storage_bytes'
    | 'max_upload_bytes'
    | 'max_database_rows'
    | 'max_database_bytes'
    | 'max_function_invocations_per_month'
    | 'max_requests_per_minute'
    | 'min_cron_interval_seconds'
    | 'max_cron_jobs'
    | 'max_concurrent_function_runs'
    | 'max_async_invokes_per_run'
    | 'max_realtime_subscribers'
    | 'max_pending_uploads'
    | 'max_database_connections'
    | 'database_cpu_seconds_per_minute',
    number | null
  >
>;

/** Sets limits of `planId` on the platform at `databaseUrl` and tells every process (the cached limits empty at once). */
export async function setPlanLimits(databaseUrl: string, planId: string, limits: PlanLimitChange): Promise<void> {
  const columns = Object.keys(limits);
  if (columns.some((c) => !/^[a-z_]+$/.test(c))) throw new Error(`not a plan column: ${columns.join(', ')}`);
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    configureBroadcasts(TEST_SECRET);
    await client.query(
      `update plans set ${columns.map((c, i) => `${c} = $${i + 2}`).join(', ')}, updated_at = now() where id = $1`,
      [planId, ...columns.map((c) => limits[c as keyof PlanLimitChange])],
    );
    await publishBroadcastNow(client, 'plans.changed', { planId });
  } finally {
    await client.end();
  }
}
