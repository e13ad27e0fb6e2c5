// The identity subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { IdentityInitialMigration } from './0001-initial.ts';
import { IdentityEndUserAdminMigration } from './0002-end-user-admin.ts';
import { IdentityDeletedClientsMigration } from './0003-deleted-clients.ts';

export const identityMigrations: MigrationObject[] = [
  { name: '0001-identity-initial', class: IdentityInitialMigration },
  { name: '0002-identity-end-user-admin', class: IdentityEndUserAdminMigration },
  { name: '0003-identity-deleted-clients', class: IdentityDeletedClientsMigration },
];
