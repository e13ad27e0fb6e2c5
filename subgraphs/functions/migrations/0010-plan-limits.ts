// The plan's function limits (issue 28): run slots per project (max_concurrent_function_runs), async invokes per tree
// of runs (max_async_invokes_per_run), and each execution's root run (the run whose tree it belongs to).
import { Migration } from '@mikro-orm/migrations';

export class FunctionsPlanLimitsMigration extends Migration {
  override name = '0010-functions-plan-limits';

  override up(): void {
    // The run that started the tree this execution belongs to (null: it is a root itself).
    this.addSql('alter table function_executions add column if not exists root_id uuid');
    // The project's runs executing now (the operator's usage view) without scanning its history.
    this.addSql(
      "create index if not exists function_executions_running on function_executions (project_id) where status = 'running'",
    );
    // One row per run executing now of a project whose plan caps concurrent runs: a lease (expires_at) so a process
    // that dies mid-run frees its slot after the run's timeout.
    this.addSql(`create table if not exists function_run_slots (
      project_id uuid not null,
      slot integer not null,
      holder uuid not null,
      expires_at timestamptz not null,
      primary key (project_id, slot)
    )`);
    // Async invokes started so far by each tree of runs (counted against its root).
    this.addSql(`create table if not exists function_fanout (
      root_id uuid primary key,
      project_id uuid not null,
      invokes integer not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create index if not exists function_fanout_updated on function_fanout (updated_at)');
  }

  override down(): void {
    this.addSql('drop table if exists function_fanout');
    this.addSql('drop table if exists function_run_slots');
    this.addSql('drop index if exists function_executions_running');
    this.addSql('alter table function_executions drop column if exists root_id');
  }
}
