// Creates every table of the tenant subgraph and seeds the plans. Raw SQL: the migration is the
// schema's source of truth, the entities only map onto it.
import { Migration } from '@mikro-orm/migrations';

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;

/** The seeded plans: [id, name, description, projects, storage, upload, rows, invocations/month, requests/min, cents/month]. */
export const SEEDED_PLANS: [string, string, string, number, number, number, number, number, number, number][] = [
  ['free', 'Free', 'For side projects and trying Tessera out.', 3, 1 * GIB, 50 * MIB, 100_000, 500_000, 600, 0],
  ['pro', 'Pro', 'For production apps with real traffic.', 20, 100 * GIB, 5 * GIB, 10_000_000, 5_000_000, 6_000, 2_500],
  [
    'enterprise',
    'Enterprise',
    'For large teams: high limits and priority support.',
    1_000,
    10_240 * GIB,
    50 * GIB,
    1_000_000_000,
    100_000_000,
    60_000,
    99_900,
  ],
];

export class TenantInitialMigration extends Migration {
  override name = '0001-tenant-initial';

  override up(): void {
    this.addSql(`create table plans (
      id text primary key,
      name text not null,
      description text not null,
      max_projects integer not null,
      max_storage_bytes bigint not null,
      max_upload_bytes bigint not null,
      max_database_rows bigint not null,
      max_function_invocations_per_month bigint not null,
      max_requests_per_minute integer not null,
      price_cents_per_month integer not null,
      sort_order integer not null
    )`);

    this.addSql(`create table tenants (
      id uuid primary key,
      email text not null,
      name text not null,
      password_hash text not null,
      plan_id text not null references plans (id),
      mfa_enabled boolean not null default false,
      mfa_secret text,
      mfa_pending_secret text,
      mfa_last_time_step bigint,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index tenants_email_key on tenants (email)');

    this.addSql(`create table tenant_sessions (
      id uuid primary key,
      tenant_id uuid not null references tenants (id) on delete cascade,
      refresh_token_hash text not null,
      rotated_refresh_token_hashes text[] not null default '{}',
      created_at timestamptz not null,
      last_refreshed_at timestamptz,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      revoked_reason text,
      ip text
    )`);
    this.addSql('create unique index tenant_sessions_refresh_token_hash_key on tenant_sessions (refresh_token_hash)');
    this.addSql(
      'create index tenant_sessions_rotated_hashes_idx on tenant_sessions using gin (rotated_refresh_token_hashes)',
    );
    this.addSql('create index tenant_sessions_tenant_id_idx on tenant_sessions (tenant_id)');

    this.addSql(`create table tenant_signing_keys (
      kid text primary key,
      alg text not null,
      public_jwk jsonb not null,
      private_jwk_sealed text not null,
      status text not null check (status in ('current', 'previous', 'retired')),
      created_at timestamptz not null,
      retired_at timestamptz
    )`);
    // At most one current and one previous key, whatever instances race at start-up.
    this.addSql(
      `create unique index tenant_signing_keys_one_per_status on tenant_signing_keys (status) where status in ('current', 'previous')`,
    );

    this.addSql(`create table projects (
      id uuid primary key,
      tenant_id uuid not null references tenants (id) on delete cascade,
      name text not null,
      api_key_sealed text not null,
      api_key_hash text not null,
      api_key_prefix text not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index projects_api_key_hash_key on projects (api_key_hash)');
    this.addSql('create index projects_tenant_page_idx on projects (tenant_id, created_at, id)');

    this.addSql(`create table project_oidc_clients (
      client_id text primary key,
      project_id uuid not null references projects (id) on delete cascade,
      name text not null,
      client_secret_sealed text not null,
      client_secret_hash text not null,
      redirect_uris text[] not null default '{}',
      grant_types text[] not null,
      is_default boolean not null default false,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create index project_oidc_clients_project_id_idx on project_oidc_clients (project_id, created_at)');

    this.addSql(`create table project_publications (
      id uuid primary key,
      project_id uuid not null references projects (id) on delete cascade,
      table_name text not null,
      enabled boolean not null,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql(
      'create unique index project_publications_project_table_key on project_publications (project_id, table_name)',
    );

    SEEDED_PLANS.forEach(([id, name, description, projects, storage, upload, rows, invocations, rpm, cents], i) => {
      const q = (s: string) => `'${s.replace(/'/g, "''")}'`;
      this.addSql(
        `insert into plans values (${q(id)}, ${q(name)}, ${q(description)}, ${projects}, ${storage}, ${upload}, ${rows}, ${invocations}, ${rpm}, ${cents}, ${i})`,
      );
    });
  }

  override down(): void {
    for (const table of [
      'project_publications',
      'project_oidc_clients',
      'projects',
      'tenant_signing_keys',
      'tenant_sessions',
      'tenants',
      'plans',
    ]) {
      this.addSql(`drop table if exists ${table}`);
    }
  }
}
