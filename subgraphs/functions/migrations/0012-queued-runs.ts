// The count of a project's queued runs not yet ended (held, queued or running), which every batch of async invokes reads to enforce the
// plan's max_queued_function_runs (services/run-limits.ts): an index of the waiting executions alone, small whatever
// the history.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsQueuedRunsMigration extends Migration {
  override name = '0012-functions-queued-runs';

  override up(): void {
    this.addSql(
      "create index if not exists function_executions_waiting on function_executions (project_id) where status in ('held', 'queued', 'running')",
    );
  }

  override down(): void {
    this.addSql('drop index if exists function_executions_waiting');
  }
}
