// The tenant subgraph's migrations, oldest first. Never edit one that has shipped: add a new one.
import type { MigrationObject } from '@mikro-orm/postgresql';
import { TenantInitialMigration } from './0001-initial.ts';
import { TenantOidcClientPublicMigration } from './0002-oidc-client-public.ts';
import { TenantOidcClientScopesMigration } from './0003-oidc-client-scopes.ts';
import { TenantPublishableKeyCorsMigration } from './0004-publishable-key-cors.ts';
import { TenantSessionRefreshReuseMigration } from './0005-session-refresh-reuse.ts';
import { TenantAccountLifecycleMigration } from './0006-account-lifecycle.ts';
import { TenantRequestLogBrandingMigration } from './0007-request-log-branding.ts';
import { TenantOperatorPlansMigration } from './0008-operator-plans.ts';
import { TenantQueuedRunsMigration } from './0009-queued-runs.ts';

export const tenantMigrations: MigrationObject[] = [
  { name: '0001-tenant-initial', class: TenantInitialMigration },
  { name: '0002-tenant-oidc-client-public', class: TenantOidcClientPublicMigration },
  { name: '0003-tenant-oidc-client-scopes', class: TenantOidcClientScopesMigration },
  { name: '0004-tenant-publishable-key-cors', class: TenantPublishableKeyCorsMigration },
  { name: '0005-tenant-session-refresh-reuse', class: TenantSessionRefreshReuseMigration },
  { name: '0006-tenant-account-lifecycle', class: TenantAccountLifecycleMigration },
  { name: '0007-tenant-request-log-branding', class: TenantRequestLogBrandingMigration },
  { name: '0008-tenant-operator-plans', class: TenantOperatorPlansMigration },
  { name: '0009-tenant-queued-runs', class: TenantQueuedRunsMigration },
];
