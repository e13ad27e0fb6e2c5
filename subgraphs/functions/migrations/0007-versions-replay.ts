// Issue 17: replay of an execution from a step. A replay runs by default the definition the execution ran, so every
// version of a function is kept (`edge_function_versions`, written with each create and update; existing functions
// get their current version, earlier versions were not kept). A replay's execution names the one it replays
// (`replay_of`) and the step it started from (`replay_from`).
import { Migration } from '@mikro-orm/migrations';

export class FunctionsVersionsReplayMigration extends Migration {
  override name = '0007-functions-versions-replay';

  override up(): void {
    this.addSql(`create table edge_function_versions (
      function_id uuid not null references edge_functions (id) on delete cascade,
      version integer not null,
      steps jsonb not null,
      timeout_ms integer not null,
      retries integer not null,
      created_at timestamptz not null,
      primary key (function_id, version)
    )`);
    this.addSql(`insert into edge_function_versions (function_id, version, steps, timeout_ms, retries, created_at)
      select id, version, steps, timeout_ms, retries, updated_at from edge_functions`);
    this.addSql('alter table function_executions add column replay_of uuid');
    this.addSql('alter table function_executions add column replay_from text');
  }
}
