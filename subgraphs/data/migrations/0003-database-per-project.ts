// One PostgreSQL database per project (issue 11): the platform database keeps, per project, the names of its
// database and roles (`database_name`; rows without one were made by 0.1, whose projects lived in schemas of the
// platform database, see README "Upgrading"), the projects deleted (so a late request cannot provision a deleted
// project again), which projects may have after-hook rows waiting in their own database's outbox, and the last
// hook triggers known of each project.
import { Migration } from '@mikro-orm/migrations';

export class DataDatabasePerProjectMigration extends Migration {
  override name = '0003-data-database-per-project';

  override up(): void {
    this.addSql('alter table data_project_roles add column database_name text unique');
    this.addSql(`create table data_deleted_projects (
      project_id uuid primary key,
      deleted_at timestamptz not null default now()
    )`);
    // Touched by every write with after-hooks just before it commits; the sweeper visits the projects touched more
    // than a minute ago, drains their outbox and forgets them (see services/hook-outbox.ts).
    this.addSql(`create table data_hook_outbox_projects (
      project_id uuid primary key,
      touched_at timestamptz not null default now(),
      attempts int not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_error text
    )`);
    this.addSql('create index data_hook_outbox_projects_due on data_hook_outbox_projects (next_attempt_at)');
    // The last hook triggers the functions subgraph named for each project: what writes go by while it cannot be
    // asked (services/hooks.ts), so a table without hooks is never blocked by the functions service being away.
    this.addSql(`create table data_hook_triggers (
      project_id uuid primary key,
      triggers jsonb not null,
      loaded_at timestamptz not null default now()
    )`);
  }
}
