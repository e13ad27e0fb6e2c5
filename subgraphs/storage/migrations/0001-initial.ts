// The storage subgraph's tables. Raw SQL: the migration is the schema's source of truth.
import { Migration } from '@mikro-orm/migrations';

export class StorageInitialMigration extends Migration {
  override name = '0001-storage-initial';

  override up(): void {
    this.addSql(`create table storage_objects (
      id uuid primary key,
      project_id uuid not null,
      folder text not null,
      name text not null,
      path text not null,
      content_type text not null,
      size bigint,
      sha256 text,
      status text not null check (status in ('uploading', 'pending', 'ready')),
      owner_id text,
      confirm_on_complete boolean not null default false,
      upsert boolean not null default false,
      max_bytes bigint not null,
      created_at timestamptz not null,
      updated_at timestamptz not null,
      confirmed_at timestamptz
    )`);
    // One ready object per path; any number of uploads of it may be in flight.
    this.addSql(
      `create unique index storage_objects_ready_path_key on storage_objects (project_id, path) where status = 'ready'`,
    );
    this.addSql(
      'create index storage_objects_project_folder_idx on storage_objects (project_id, status, folder, path)',
    );
    this.addSql(
      'create index storage_objects_project_created_idx on storage_objects (project_id, status, created_at, id)',
    );
    this.addSql(`create index storage_objects_unconfirmed_idx on storage_objects (created_at) where status <> 'ready'`);

    this.addSql(`create table storage_policies (
      id uuid primary key,
      project_id uuid not null,
      name text not null,
      folder text not null,
      operations text[] not null,
      principal text not null,
      content_types text[],
      created_at timestamptz not null
    )`);
    this.addSql('create unique index storage_policies_project_name_key on storage_policies (project_id, name)');

    this.addSql(`create table storage_project_limits (
      project_id uuid primary key,
      max_storage_bytes bigint not null,
      max_upload_bytes bigint not null,
      updated_at timestamptz not null
    )`);
  }
}
