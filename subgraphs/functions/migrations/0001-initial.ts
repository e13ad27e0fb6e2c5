// Creates every table of the edge-functions subgraph. Raw SQL: the migration is the schema's source of truth.
import { Migration } from '@mikro-orm/migrations';

export class FunctionsInitialMigration extends Migration {
  override name = '0001-functions-initial';

  override up(): void {
    this.addSql(`create table edge_functions (
      id uuid primary key,
      project_id uuid not null,
      tenant_id uuid not null,
      name text not null,
      slug text not null,
      description text not null default '',
      steps jsonb not null,
      timeout_ms integer not null,
      retries integer not null,
      version integer not null default 1,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index edge_functions_project_name_key on edge_functions (project_id, name)');
    this.addSql('create unique index edge_functions_project_slug_key on edge_functions (project_id, slug)');

    this.addSql(`create table function_secrets (
      project_id uuid not null,
      name text not null,
      value_sealed text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      primary key (project_id, name)
    )`);

    this.addSql(`create table webhook_receivers (
      id uuid primary key,
      project_id uuid not null,
      slug text not null,
      function_id uuid not null references edge_functions (id) on delete cascade,
      description text not null default '',
      created_at timestamptz not null
    )`);
    this.addSql('create unique index webhook_receivers_project_slug_key on webhook_receivers (project_id, slug)');

    this.addSql(`create table webhook_idempotency (
      project_id uuid not null,
      slug text not null,
      key text not null,
      response jsonb,
      created_at timestamptz not null,
      primary key (project_id, slug, key)
    )`);
    this.addSql('create index webhook_idempotency_created_at on webhook_idempotency (created_at)');

    this.addSql(`create table cron_jobs (
      id uuid primary key,
      project_id uuid not null,
      name text not null,
      schedule text not null,
      timezone text not null,
      function_id uuid not null references edge_functions (id) on delete cascade,
      input jsonb,
      enabled boolean not null,
      last_run_at timestamptz,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index cron_jobs_project_name_key on cron_jobs (project_id, name)');

    this.addSql(`create table email_templates (
      id uuid primary key,
      project_id uuid not null,
      name text not null,
      subject text not null,
      html text not null,
      text text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index email_templates_project_name_key on email_templates (project_id, name)');

    this.addSql(`create table email_configs (
      project_id uuid primary key,
      host text not null,
      port integer not null,
      secure boolean not null,
      username text,
      password_sealed text,
      from_address text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);

    this.addSql(`create table function_executions (
      id uuid primary key,
      project_id uuid not null,
      function_id uuid,
      function_name text not null,
      function_version integer not null,
      trigger text not null,
      trigger_ref text,
      parent_id uuid,
      depth integer not null default 0,
      status text not null,
      input jsonb,
      output jsonb,
      error jsonb,
      response_status integer,
      created_at timestamptz not null,
      started_at timestamptz,
      finished_at timestamptz,
      duration_ms double precision
    )`);
    this.addSql(
      'create index function_executions_project_created on function_executions (project_id, created_at desc, id desc)',
    );
    this.addSql(
      'create index function_executions_project_function on function_executions (project_id, function_name, created_at desc)',
    );

    this.addSql(`create table function_execution_events (
      id bigserial primary key,
      execution_id uuid not null references function_executions (id) on delete cascade,
      seq integer not null,
      step text not null,
      kind text not null,
      type text not null,
      attempt integer not null default 1,
      input jsonb,
      output jsonb,
      error jsonb,
      duration_ms double precision,
      at timestamptz not null
    )`);
    this.addSql('create index function_execution_events_execution on function_execution_events (execution_id, seq)');
  }
}
