// Public OIDC clients (no secret; PKCE required at the identity provider). Existing clients stay confidential.
import { Migration } from '@mikro-orm/migrations';

export class TenantOidcClientPublicMigration extends Migration {
  override name = '0002-tenant-oidc-client-public';

  override up(): void {
    this.addSql('alter table project_oidc_clients add column is_public boolean not null default false');
  }

  override down(): void {
    this.addSql('alter table project_oidc_clients drop column if exists is_public');
  }
}
