// Scopes are granted, never taken: each OIDC client gets the list of scopes it may be issued. Existing
// clients get the standard OpenID Connect scopes and role scopes (`role:*`, granted only for roles the
// project assigned to the end-user); anything else (custom API scopes, admin scopes) is granted by the tenant.
import { Migration } from '@mikro-orm/migrations';

export class TenantOidcClientScopesMigration extends Migration {
  override name = '0003-tenant-oidc-client-scopes';

  override up(): void {
    this.addSql(
      `alter table project_oidc_clients add column allowed_scopes text[] not null default '{openid,profile,email,phone,offline_access,role:*}'`,
    );
  }

  override down(): void {
    this.addSql('alter table project_oidc_clients drop column if exists allowed_scopes');
  }
}
