// Issue 26: a developer can recover an account. Single-use tokens mailed for a password reset or to confirm a new
// e-mail address (stored as SHA-256 hashes, expiring), and MFA recovery codes (HMAC-SHA-256 under a key derived from
// the internal secret, so the database alone does not let anyone test guesses; each usable once).
import { Migration } from '@mikro-orm/migrations';

export class TenantAccountLifecycleMigration extends Migration {
  override name = '0006-tenant-account-lifecycle';

  override up(): void {
    this.addSql(`create table tenant_account_tokens (
      token_hash text primary key,
      purpose text not null check (purpose in ('password_reset', 'email_change')),
      tenant_id uuid not null references tenants (id) on delete cascade,
      email text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null default now()
    )`);
    this.addSql('create index tenant_account_tokens_tenant_id_idx on tenant_account_tokens (tenant_id)');
    this.addSql(`create table tenant_recovery_codes (
      tenant_id uuid not null references tenants (id) on delete cascade,
      code_hash text not null,
      used_at timestamptz,
      created_at timestamptz not null default now(),
      primary key (tenant_id, code_hash)
    )`);
  }

  override down(): void {
    this.addSql('drop table if exists tenant_recovery_codes');
    this.addSql('drop table if exists tenant_account_tokens');
  }
}
