// The identity subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { IdentityInitialMigration } from './0001-initial.ts';

export const identityMigrations: MigrationObject[] = [{ name: '0001-identity-initial', class: IdentityInitialMigration }];
