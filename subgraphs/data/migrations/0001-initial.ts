// The data subgraph's own tables: each project's PostgreSQL role (password sealed) and the tables
// whose changes stream to realtime subscribers.
import { Migration } from '@mikro-orm/migrations';

export class DataInitialMigration extends Migration {
  override name = '0001-data-initial';

  override up(): void {
    this.addSql(`create table data_project_roles (
      project_id uuid primary key,
      schema_name text not null unique,
      role_name text not null unique,
      user_role_name text not null unique,
      password_sealed text not null,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create table data_realtime_tables (
      project_id uuid not null,
      table_name text not null,
      enabled boolean not null,
      updated_at timestamptz not null default now(),
      primary key (project_id, table_name)
    )`);
  }
}
