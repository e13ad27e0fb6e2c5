// Shared set-up of the tenant integration tests.
import { openSubgraphDatabase } from '../../../platform/database.ts';
import { lateBoundRouterClient } from '../../../platform/subgraph.ts';
import { createLogger } from '../../../platform/logger.ts';
import { tenantEntities } from '../../../subgraphs/tenant/entities/index.ts';
import { createTenantServices } from '../../../subgraphs/tenant/services/index.ts';
import type { Harness } from '../../../subgraphs/tenant/testing.ts';

/**
 * Runs `fn` with a second instance of the tenant services on the harness's database (as another process of split mode
 * would have), its signing keys ensured; closes its database connection afterwards.
 */
export async function withOtherInstance(
  h: Harness,
  fn: (services: Awaited<ReturnType<typeof createTenantServices>>) => Promise<void>,
): Promise<void> {
  const logger = createLogger('silent');
  const db = await openSubgraphDatabase({
    name: 'tenant',
    url: h.databaseUrl,
    entities: tenantEntities,
    migrations: [],
    logger,
  });
  try {
    const services = await createTenantServices({
      config: h.config,
      db,
      logger,
      databaseUrl: h.databaseUrl,
      router: lateBoundRouterClient(),
    });
    await services.signingKeys.ensureCurrent();
    await fn(services);
  } finally {
    await db.close();
  }
}
