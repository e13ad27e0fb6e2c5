// The after-hook outbox: a write with after-hooks adds its committed rows here in its own transaction, so they
// reach the functions subgraph even when the process dies (or the functions subgraph is unreachable) between
// the commit and the hand-off (services/hook-outbox.ts hands them off and deletes them; its sweeper retries).
// Project connections add rows only through `tessera_hooks.outbox_add`, which checks that the connection is
// that project's own: they cannot reach the table itself (it lives in the platform's schema, closed to them).
import { Migration } from '@mikro-orm/migrations';

export class DataHookOutboxMigration extends Migration {
  override name = '0002-data-hook-outbox';

  override up(): void {
    this.addSql(`create table data_hook_outbox (
      id bigserial primary key,
      project_id uuid not null,
      payload jsonb not null,
      created_at timestamptz not null default now(),
      attempts int not null default 0,
      next_attempt_at timestamptz not null default now(),
      last_error text
    )`);
    this.addSql('create index data_hook_outbox_due on data_hook_outbox (next_attempt_at, id)');
    this.addSql('create schema if not exists tessera_hooks');
    this.addSql('grant usage on schema tessera_hooks to public');
    // SECURITY DEFINER: runs as the platform role, so it may insert into the platform's table. session_user is
    // the role the connection logged in as (an end-user request's `set local role` changes current_user only,
    // and project roles cannot change session_user): only that project's login role may add its rows.
    this.addSql(`create function tessera_hooks.outbox_add(p_project_id uuid, p_payload jsonb) returns bigint
      language plpgsql security definer as $fn$
      declare
        new_id bigint;
      begin
        if not exists (select 1 from data_project_roles r where r.project_id = p_project_id and r.role_name = session_user) then
          raise exception 'tessera_hooks.outbox_add: only project %''s own connection may add its rows', p_project_id using errcode = '42501';
        end if;
        if jsonb_typeof(p_payload) is distinct from 'object' or jsonb_typeof(p_payload -> 'writes') is distinct from 'array' then
          raise exception 'tessera_hooks.outbox_add: the payload must be an object with a "writes" array' using errcode = '22023';
        end if;
        insert into data_hook_outbox (project_id, payload) values (p_project_id, p_payload) returning id into new_id;
        return new_id;
      end
      $fn$`);
    // The search path is pinned to the schema the platform's tables were just created in (pg_temp last, so no
    // temporary table can stand in for them).
    this.addSql(`do $do$ begin
      execute format('alter function tessera_hooks.outbox_add(uuid, jsonb) set search_path = pg_catalog, %I, pg_temp', current_schema());
    end $do$`);
    // Every project role may call it (the check above is what keeps a project to its own rows): a grant per project
    // would grow the function's ACL with every project, and project login roles are NOINHERIT, so a group role
    // would not carry the privilege. End users' requests run as the project's end-user role and call it too.
    this.addSql('grant execute on function tessera_hooks.outbox_add(uuid, jsonb) to public');
  }
}
