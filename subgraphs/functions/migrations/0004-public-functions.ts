// Issue 14: a function may be marked public: the project's publishable key (web pages, apps) and its end-users may
// invoke it. Existing functions stay private (the secret API key only).
import { Migration } from '@mikro-orm/migrations';

export class FunctionsPublicMigration extends Migration {
  override name = '0004-functions-public';

  override up(): void {
    this.addSql('alter table edge_functions add column public boolean not null default false');
  }

  override down(): void {
    this.addSql('alter table edge_functions drop column if exists public');
  }
}
