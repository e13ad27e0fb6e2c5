// Database hooks: a project's functions run before or after the data API writes to one of its tables.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsHooksMigration extends Migration {
  override name = '0002-functions-hooks';

  override up(): void {
    this.addSql(`create table function_hooks (
      id uuid primary key,
      project_id uuid not null,
      table_name text not null,
      timing text not null check (timing in ('before', 'after')),
      events text[] not null check (cardinality(events) between 1 and 3 and events <@ array['insert', 'update', 'delete']),
      function_id uuid not null references edge_functions (id) on delete cascade,
      created_at timestamptz not null
    )`);
    // Hooks of a table run in creation order.
    this.addSql('create index function_hooks_project_table on function_hooks (project_id, table_name, created_at, id)');
  }
}
