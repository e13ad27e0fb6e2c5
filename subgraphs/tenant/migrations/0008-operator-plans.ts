// Issue 28: operators own their install. Plans become the operator's: every limit may be null (no limit), prices
// are shown only when the operator sets one, and the plans gain the limits that were missing (database bytes, cron
// interval and jobs, function concurrency and async fan-out, realtime subscribers, pending uploads, and the fair
// share of the shared PostgreSQL: connections and statement CPU time per minute). A `self-hosted` plan without caps
// is added and is the default for new tenants unless the operator picks another (platform_settings, or the
// TESSERA_DEFAULT_PLAN setting). Tenants and projects can be suspended (data kept, every call 403). Operators sign
// in with operator keys (hashed here); everything they do is audited.
import { Migration } from '@mikro-orm/migrations';

const MIB = 1024 ** 2;
const GIB = 1024 ** 3;

/**
 * The new limits of the seeded plans: [id, database bytes, min cron interval s, cron jobs, concurrent runs,
 * async invokes per run, realtime subscribers, pending uploads, database connections, database CPU s per minute].
 */
export const PLAN_LIMITS_0008: [string, ...(number | null)[]][] = [
  ['self-hosted', null, null, null, null, null, null, null, null, null],
  ['free', 500 * MIB, 10, 5, 10, 100, 200, 100, 5, 15],
  ['pro', 8 * GIB, 1, 100, 100, 1_000, 5_000, 10_000, 20, 60],
  ['enterprise', 500 * GIB, 1, 1_000, 1_000, 10_000, 100_000, 100_000, 50, 120],
];

export class TenantOperatorPlansMigration extends Migration {
  override name = '0008-tenant-operator-plans';

  override up(): void {
    this.addSql(`alter table plans
      alter column max_projects drop not null,
      alter column max_storage_bytes drop not null,
      alter column max_upload_bytes drop not null,
      alter column max_database_rows drop not null,
      alter column max_function_invocations_per_month drop not null,
      alter column max_requests_per_minute drop not null,
      alter column price_cents_per_month drop not null,
      add column max_database_bytes bigint,
      add column min_cron_interval_seconds integer,
      add column max_cron_jobs integer,
      add column max_concurrent_function_runs integer,
      add column max_async_invokes_per_run integer,
      add column max_realtime_subscribers integer,
      add column max_pending_uploads integer,
      add column max_database_connections integer,
      add column database_cpu_seconds_per_minute double precision,
      add column created_at timestamptz not null default now(),
      add column updated_at timestamptz not null default now()`);
    // The SaaS prices the first migration seeded are not this install's: an operator sets prices, or none are shown.
    this.addSql('update plans set price_cents_per_month = null');
    this.addSql(`insert into plans (id, name, description, sort_order) values ('self-hosted', 'Self-hosted',
      'No caps: every project may use what this install has, within the fair shares of the shared database.', -1)
      on conflict (id) do nothing`);
    for (const [id, ...v] of PLAN_LIMITS_0008) {
      const n = (x: number | null | undefined) => (x === null || x === undefined ? 'null' : String(x));
      this.addSql(`update plans set max_database_bytes = ${n(v[0])}, min_cron_interval_seconds = ${n(v[1])},
        max_cron_jobs = ${n(v[2])}, max_concurrent_function_runs = ${n(v[3])}, max_async_invokes_per_run = ${n(v[4])},
        max_realtime_subscribers = ${n(v[5])}, max_pending_uploads = ${n(v[6])}, max_database_connections = ${n(v[7])},
        database_cpu_seconds_per_minute = ${n(v[8])} where id = '${id}'`);
    }

    // Install-wide settings an operator changes at run time (key → JSON value): `default_plan` for new tenants.
    this.addSql(`create table platform_settings (
      key text primary key,
      value jsonb not null,
      updated_at timestamptz not null,
      updated_by text not null
    )`);

    this.addSql(`alter table tenants add column suspended_at timestamptz, add column suspended_reason text`);
    this.addSql(`alter table projects add column suspended_at timestamptz, add column suspended_reason text`);

    // Operator keys (`top_...`): named, hashed (SHA-256) for lookup, shown once.
    this.addSql(`create table operator_keys (
      id uuid primary key,
      name text not null,
      key_hash text not null,
      key_prefix text not null,
      created_at timestamptz not null,
      created_by text not null,
      last_used_at timestamptz,
      revoked_at timestamptz
    )`);
    this.addSql('create unique index operator_keys_key_hash_key on operator_keys (key_hash)');

    // What operators did: who (the operator key's name), what, to which target, when, with which details.
    this.addSql(`create table operator_audit (
      id uuid primary key,
      at timestamptz not null,
      operator text not null,
      action text not null,
      target_kind text not null,
      target_id text,
      details jsonb not null default '{}'
    )`);
    this.addSql('create index operator_audit_at on operator_audit (at desc, id desc)');
  }

  override down(): void {
    this.addSql('drop table if exists operator_audit');
    this.addSql('drop table if exists operator_keys');
    this.addSql('drop table if exists platform_settings');
    this.addSql('alter table projects drop column if exists suspended_at, drop column if exists suspended_reason');
    this.addSql('alter table tenants drop column if exists suspended_at, drop column if exists suspended_reason');
  }
}
