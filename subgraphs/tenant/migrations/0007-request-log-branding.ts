// Issue 26: the per-project request log (recent requests through the front door: time, route, status, latency,
// request id and the kind of credential; never bodies, keys or tokens). Front doors write it in batches and keep the
// newest rows of each project (TESSERA_REQUEST_LOG_ROWS); the tenant subgraph reads it for the owning tenant.
// docs/architecture.md, "The request log". Also the project's branding of the hosted end-user pages (`/authorize`):
// an optional logo (https URL) and brand colour (#rrggbb), and whether those pages offer sign-up and password reset.
import { Migration } from '@mikro-orm/migrations';

export class TenantRequestLogBrandingMigration extends Migration {
  override name = '0007-tenant-request-log-branding';

  override up(): void {
    this.addSql(`create table request_log (
      id uuid primary key,
      project_id uuid not null references projects (id) on delete cascade,
      at timestamptz not null,
      method text not null,
      route text not null,
      status smallint not null,
      duration_ms real not null,
      request_id text not null,
      credential text not null
    )`);
    this.addSql('create index request_log_project_at on request_log (project_id, at desc, id desc)');
    this.addSql(`alter table projects add column logo_url text, add column brand_color text,
      add column hosted_sign_up boolean not null default true, add column hosted_password_reset boolean not null default true`);
  }

  override down(): void {
    this.addSql('drop table if exists request_log');
    this.addSql(
      'alter table projects drop column if exists logo_url, drop column if exists brand_color, drop column if exists hosted_sign_up, drop column if exists hosted_password_reset',
    );
  }
}
