// Issue 29: project databases spread over several PostgreSQL servers. `data_servers` is the fleet the operator
// registers (the connection URL sealed like other secrets; `default` is the configured server,
// TESSERA_PROJECTS_DATABASE_URL or the platform's, whose URL is never stored), and the one row saying where a project
// lives is its `data_project_roles` row (`server_id`). A move switches that row (services/fleet.ts, move.ts).
import { Migration } from '@mikro-orm/migrations';

export class DataProjectServersMigration extends Migration {
  override name = '0005-data-project-servers';

  override up(): void {
    this.addSql(`create table if not exists data_servers (
      id text primary key check (id ~ '^[a-z][a-z0-9-]{0,39}$'),
      url_sealed text,
      weight int not null default 1 check (weight between 0 and 1000),
      state text not null default 'active' check (state in ('active', 'draining', 'read-only')),
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      check ((id = 'default') = (url_sealed is null))
    )`);
    this.addSql(`insert into data_servers (id) values ('default') on conflict do nothing`);
    this.addSql(
      `alter table data_project_roles add column if not exists server_id text not null default 'default' references data_servers (id)`,
    );
    this.addSql('create index if not exists data_project_roles_server on data_project_roles (server_id)');
  }

  override down(): void {
    this.addSql('alter table data_project_roles drop column if exists server_id');
    this.addSql('drop table if exists data_servers');
  }
}
