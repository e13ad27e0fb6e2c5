// Issue 14: a third role per project, NOLOGIN `<role>_a`, for the publishable key's anonymous visitors (the data
// API runs them under row level security like end-users). Null: the project was made before it existed; the role
// is then made on the project's first anonymous call (provisioning.ts `ensureAnonymous`).
import { Migration } from '@mikro-orm/migrations';

export class DataAnonymousRoleMigration extends Migration {
  override name = '0004-data-anonymous-role';

  override up(): void {
    this.addSql('alter table data_project_roles add column if not exists anon_role_name text');
  }

  override down(): void {
    this.addSql('alter table data_project_roles drop column if exists anon_role_name');
  }
}
