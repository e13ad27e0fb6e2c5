// Issue 28: a plan's bound on the async invokes a project may have queued and not yet started
// (`max_queued_function_runs`). Bench N1 measured a minute's burst of a free project's async invokes (hundreds accepted
// in its first seconds) as what was left of a neighbour's latency: each queued run is rows and scheduler statements
// on the platform database while it waits. The self-hosted plan keeps no cap.
import { Migration } from '@mikro-orm/migrations';

/** The seeded plans' bound: [id, queued runs]. */
export const QUEUED_RUNS_0009: [string, number | null][] = [
  ['self-hosted', null],
  ['free', 50],
  ['pro', 1_000],
  ['enterprise', 10_000],
];

export class TenantQueuedRunsMigration extends Migration {
  override name = '0009-tenant-queued-runs';

  override up(): void {
    this.addSql('alter table plans add column if not exists max_queued_function_runs integer');
    for (const [id, max] of QUEUED_RUNS_0009)
      this.addSql(
        `update plans set max_queued_function_runs = ${max === null ? 'null' : String(max)} where id = '${id}'`,
      );
  }

  override down(): void {
    this.addSql('alter table plans drop column if exists max_queued_function_runs');
  }
}
