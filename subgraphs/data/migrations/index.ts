// The data subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { DataInitialMigration } from './0001-initial.ts';

export const dataMigrations: MigrationObject[] = [{ name: '0001-data-initial', class: DataInitialMigration }];
