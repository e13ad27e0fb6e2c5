// The storage subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { StorageInitialMigration } from './0001-initial.ts';
import { StorageNullableLimitsMigration } from './0002-nullable-limits.ts';

export const storageMigrations: MigrationObject[] = [
  { name: '0001-storage-initial', class: StorageInitialMigration },
  { name: '0002-storage-nullable-limits', class: StorageNullableLimitsMigration },
];
