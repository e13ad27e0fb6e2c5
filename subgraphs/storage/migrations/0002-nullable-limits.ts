// Issue 28: a plan's limit may be null (no limit: the operator's `self-hosted` plan has none), and storage keeps the
// copy it was handed as it is.
import { Migration } from '@mikro-orm/migrations';

export class StorageNullableLimitsMigration extends Migration {
  override name = '0002-storage-nullable-limits';

  override up(): void {
    this.addSql(`alter table storage_project_limits
      alter column max_storage_bytes drop not null,
      alter column max_upload_bytes drop not null`);
  }

  override down(): void {
    // Nothing to undo safely: a null limit has no not-null equivalent.
  }
}
