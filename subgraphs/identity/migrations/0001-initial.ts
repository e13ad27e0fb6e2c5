// Creates every table of the identity subgraph (prefix `identity_`). Raw SQL: the migration is the
// schema's source of truth, the entities only map onto it.
import { Migration } from '@mikro-orm/migrations';

export class IdentityInitialMigration extends Migration {
  override name = '0001-identity-initial';

  override up(): void {
    this.addSql(`create table identity_users (
      id uuid primary key,
      project_id uuid not null,
      email text not null,
      email_verified boolean not null default false,
      password_hash text not null,
      profile jsonb not null default '{}',
      mfa_enabled boolean not null default false,
      mfa_secret text,
      mfa_pending_secret text,
      mfa_last_time_step bigint,
      created_at timestamptz not null,
      updated_at timestamptz not null
    )`);
    this.addSql('create unique index identity_users_project_email_key on identity_users (project_id, email)');

    // A session is one sign-in at one client and also its refresh-token family.
    this.addSql(`create table identity_sessions (
      id uuid primary key,
      project_id uuid not null,
      user_id uuid not null references identity_users (id) on delete cascade,
      client_id text not null,
      scope text not null,
      amr text[] not null default '{}',
      auth_time timestamptz not null,
      refresh_token_hash text not null,
      rotated_refresh_token_hashes text[] not null default '{}',
      created_at timestamptz not null,
      last_refreshed_at timestamptz,
      expires_at timestamptz not null,
      revoked_at timestamptz,
      revoked_reason text,
      ip text
    )`);
    this.addSql(
      'create unique index identity_sessions_refresh_token_hash_key on identity_sessions (refresh_token_hash)',
    );
    this.addSql(
      'create index identity_sessions_rotated_hashes_idx on identity_sessions using gin (rotated_refresh_token_hashes)',
    );
    this.addSql('create index identity_sessions_user_idx on identity_sessions (user_id)');
    this.addSql('create index identity_sessions_project_idx on identity_sessions (project_id)');

    this.addSql(`create table identity_authorization_codes (
      code_hash text primary key,
      project_id uuid not null,
      client_id text not null,
      user_id uuid not null references identity_users (id) on delete cascade,
      redirect_uri text not null,
      scope text not null,
      nonce text,
      code_challenge text,
      code_challenge_method text,
      amr text[] not null default '{}',
      auth_time timestamptz not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      session_id uuid,
      created_at timestamptz not null
    )`);

    // Access tokens revoked one by one (RFC 7009), kept until they would have expired anyway.
    this.addSql(`create table identity_revoked_tokens (
      jti text primary key,
      project_id uuid not null,
      expires_at timestamptz not null,
      revoked_at timestamptz not null
    )`);

    this.addSql(`create table identity_signing_keys (
      kid text primary key,
      alg text not null,
      public_jwk jsonb not null,
      private_jwk_sealed text not null,
      status text not null check (status in ('current', 'previous', 'retired')),
      created_at timestamptz not null,
      demoted_at timestamptz,
      retired_at timestamptz
    )`);
    this.addSql(
      `create unique index identity_signing_keys_one_current on identity_signing_keys (status) where status = 'current'`,
    );

    // Password reset and e-mail verification tokens: hashed, single use, expiring.
    this.addSql(`create table identity_user_tokens (
      token_hash text primary key,
      purpose text not null check (purpose in ('password_reset', 'email_verification')),
      project_id uuid not null,
      user_id uuid not null references identity_users (id) on delete cascade,
      email text not null,
      expires_at timestamptz not null,
      used_at timestamptz,
      created_at timestamptz not null
    )`);
    this.addSql('create index identity_user_tokens_user_idx on identity_user_tokens (user_id, purpose)');

    // Projects deleted in the tenant subgraph (platform event project.deleted): their tokens stop working.
    this.addSql(
      `create table identity_deleted_projects (project_id uuid primary key, deleted_at timestamptz not null)`,
    );
  }

  override down(): void {
    for (const t of [
      'identity_deleted_projects',
      'identity_user_tokens',
      'identity_signing_keys',
      'identity_revoked_tokens',
      'identity_authorization_codes',
      'identity_sessions',
      'identity_users',
    ]) {
      this.addSql(`drop table if exists ${t}`);
    }
  }
}
