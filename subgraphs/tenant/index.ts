// The tenant subgraph: developer accounts (and their recovery), sessions, MFA, plans and projects. A definition only:
// the platform's startSubgraph opens its database, runs its migrations and serves it.
import { defineSubgraph } from '../../platform/subgraph.ts';
import { tenantEntities } from './entities/index.ts';
import { tenantJobs } from './jobs/index.ts';
import { tenantMigrations } from './migrations/index.ts';
import { tenantResolvers } from './resolvers/index.ts';
import { createTenantServices, type TenantServices } from './services/index.ts';

export const tenantSubgraph = defineSubgraph<TenantServices>({
  name: 'tenant',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: tenantEntities,
  migrations: tenantMigrations,
  createServices: createTenantServices,
  resolvers: tenantResolvers,
  jobs: tenantJobs,
  // Creates the first signing key, so the first sign-in does not pay for it.
  start: async (services) => {
    await services.signingKeys.ensureCurrent();
    // The OIDC client cache follows changes announced by every process.
    await services.oidcClients.start();
    // Sign-in failures counted by other tenant processes count here too.
    await services.limitSharing.start();
    // An operator's plan change made in another process empties this one's copy of the plans.
    await services.plans.start();
  },
  stop: async (services) => {
    await services.oidcClients.stop();
    await services.limitSharing.stop();
    await services.plans.stop();
    services.mail.close();
  },
});
