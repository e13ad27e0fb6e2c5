// Changing a plan's limits in a test as the operator does: through the admin API (`PATCH /admin/api/v1/plans/:id`
// with the test platforms' operator key), which writes the plan, its audit row and the `plans.changed` broadcast
// every process listens for. Given only a database (no platform started by tests/support/platform.ts), the row is
// written and the broadcast sent directly, as the admin API does.
import pg from 'pg';
import { configureBroadcasts, publishBroadcastNow } from '../../platform/broadcast.ts';
import { TEST_OPERATOR_KEY, TEST_SECRET, type TestPlatform } from './platform.ts';

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
    | 'max_queued_function_runs'
    | 'max_realtime_subscribers'
    | 'max_pending_uploads'
    | 'max_database_connections'
    | 'database_cpu_seconds_per_minute',
    number | null
  >
>;

/**
 * Sets limits of `planId` as the operator (a platform: its admin API), or straight in `databaseUrl` plus the broadcast;
 * either way every process's cached limits empty at once.
 */
export async function setPlanLimits(
  target: string | Pick<TestPlatform, 'url'>,
  planId: string,
  limits: PlanLimitChange,
): Promise<void> {
  if (typeof target !== 'string') {
    const res = await fetch(`${target.url}/admin/api/v1/plans/${encodeURIComponent(planId)}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${TEST_OPERATOR_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ limits }),
    });
    if (res.status !== 200) throw new Error(`the operator's plan change answered ${res.status}: ${await res.text()}`);
    return;
  }
  const databaseUrl = target;
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
