// What the end-user admin API manages: roles the project assigns (the only source of `role:<name>` scopes),
// app metadata (set by the project, never by the user), and a disabled flag (sign-in refused, sessions ended).
import { Migration } from '@mikro-orm/migrations';

export class IdentityEndUserAdminMigration extends Migration {
  override name = '0002-identity-end-user-admin';

  override up(): void {
    this.addSql(`alter table identity_users add column roles text[] not null default '{}'`);
    this.addSql(`alter table identity_users add column app_metadata jsonb not null default '{}'`);
    this.addSql('alter table identity_users add column disabled_at timestamptz');
    // Listing a project's users newest first, one page at a time.
    this.addSql(
      'create index identity_users_project_created_idx on identity_users (project_id, created_at desc, id desc)',
    );
  }

  override down(): void {
    this.addSql('drop index if exists identity_users_project_created_idx');
    for (const c of ['disabled_at', 'app_metadata', 'roles'])
      this.addSql(`alter table identity_users drop column if exists ${c}`);
  }
}
