// Issue 26: a tenant's refresh token presented again within a few seconds of its rotation (two tabs, or two calls of
// one page, refreshing at once) gets the pair it was rotated into instead of ending the session. A session keeps the
// hash of the token it was last rotated from, that rotation's client address, and its current refresh token sealed
// under a key derived from the internal secret AND the previous token: only the holder of that token can open it, and
// the database with the secret alone cannot (docs/architecture.md, "Refresh-token reuse interval").
import { Migration } from '@mikro-orm/migrations';

export class TenantSessionRefreshReuseMigration extends Migration {
  override name = '0005-tenant-session-refresh-reuse';

  override up(): void {
    this.addSql(
      'alter table tenant_sessions add column refreshed_from_hash text, add column refreshed_ip text, add column successor_sealed text',
    );
  }

  override down(): void {
    this.addSql(
      'alter table tenant_sessions drop column if exists refreshed_from_hash, drop column if exists refreshed_ip, drop column if exists successor_sealed',
    );
  }
}
