// OIDC clients deleted in the tenant subgraph (platform event oidc-client.deleted): the access tokens issued to them
// are refused from then on (user tokens also end with their sessions; client_credentials tokens have none).
import { Migration } from '@mikro-orm/migrations';

export class IdentityDeletedClientsMigration extends Migration {
  override name = '0003-identity-deleted-clients';

  override up(): void {
    this.addSql(
      `create table identity_deleted_clients (client_id text primary key, project_id uuid not null, deleted_at timestamptz not null)`,
    );
  }

  override down(): void {
    this.addSql('drop table if exists identity_deleted_clients');
  }
}
