// The data subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { DataInitialMigration } from './0001-initial.ts';
import { DataHookOutboxMigration } from './0002-hook-outbox.ts';
import { DataDatabasePerProjectMigration } from './0003-database-per-project.ts';
import { DataAnonymousRoleMigration } from './0004-anonymous-role.ts';
import { DataProjectServersMigration } from './0005-project-servers.ts';
import { DataProjectMovesMigration } from './0006-project-moves.ts';

export const dataMigrations: MigrationObject[] = [
  { name: '0001-data-initial', class: DataInitialMigration },
  { name: '0002-data-hook-outbox', class: DataHookOutboxMigration },
  { name: '0003-data-database-per-project', class: DataDatabasePerProjectMigration },
  { name: '0004-data-anonymous-role', class: DataAnonymousRoleMigration },
  { name: '0005-data-project-servers', class: DataProjectServersMigration },
  { name: '0006-data-project-moves', class: DataProjectMovesMigration },
];
