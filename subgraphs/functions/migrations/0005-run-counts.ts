// Function runs per project and calendar month (UTC), counted against the plan's maxFunctionInvocationsPerMonth.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsRunCountsMigration extends Migration {
  override name = '0005-functions-run-counts';

  override up(): void {
    this.addSql(`create table if not exists function_run_counts (
      project_id uuid not null,
      month date not null,
      runs bigint not null default 0,
      primary key (project_id, month)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists function_run_counts');
  }
}
