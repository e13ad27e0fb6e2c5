// The one REST route table: every documented path is a row naming a GraphQL operation.
// Rows live per domain in ./routes/; this file is the only place they are put together.
import type { RouteRow } from './route-types.ts';
import { tenantRoutes } from './routes/tenant.ts';
import { identityRoutes } from './routes/identity.ts';
import { dataRoutes } from './routes/data.ts';
import { storageRoutes } from './routes/storage.ts';
import { functionsRoutes } from './routes/functions.ts';
import { adminRoutes } from './routes/admin.ts';

export type { RouteRow };

export const ROUTE_TABLE: readonly RouteRow[] = [
  ...tenantRoutes,
  ...identityRoutes,
  ...storageRoutes,
  ...dataRoutes,
  ...functionsRoutes,
  ...adminRoutes,
];
