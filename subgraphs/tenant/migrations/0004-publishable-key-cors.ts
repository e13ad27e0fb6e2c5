// Issue 14: a second project key for browsers and apps (the publishable key, `tpk_...`), and the CORS settings
// of each project. Projects made before get their publishable key on first read (the key is sealed with the
// internal secret, which SQL here does not hold); a project without CORS settings has no row.
import { Migration } from '@mikro-orm/migrations';

export class TenantPublishableKeyCorsMigration extends Migration {
  override name = '0004-tenant-publishable-key-cors';

  override up(): void {
    this.addSql(
      'alter table projects add column publishable_key_sealed text, add column publishable_key_hash text, add column publishable_key_prefix text',
    );
    this.addSql('create unique index projects_publishable_key_hash on projects (publishable_key_hash)');
    this.addSql(`create table project_cors (
      project_id uuid primary key references projects (id) on delete cascade,
      allowed_origins text[] not null,
      allowed_methods text[] not null,
      allowed_headers text[] not null,
      exposed_headers text[] not null,
      max_age integer not null,
      allow_credentials boolean not null,
      updated_at timestamptz not null
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists project_cors');
    this.addSql('drop index if exists projects_publishable_key_hash');
    this.addSql(
      'alter table projects drop column if exists publishable_key_sealed, drop column if exists publishable_key_hash, drop column if exists publishable_key_prefix',
    );
  }
}
