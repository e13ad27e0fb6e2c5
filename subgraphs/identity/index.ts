// Identity provider subgraph: OIDC / OAuth 2.0 for each project's end-users. A definition only: the
// platform's startSubgraph opens its database, runs its migrations and serves it. The wire endpoints
// live in rest-compat/handlers/identity/ and call the operations of schema.graphql (platform/internal-operations.ts).
import { defineSubgraph } from '../../platform/subgraph.ts';
import { identityEntities } from './entities/index.ts';
import { identityJobs } from './jobs/index.ts';
import { identityMigrations } from './migrations/index.ts';
import { identityResolvers } from './resolvers/index.ts';
import { createIdentityServices, type IdentityServices } from './services/index.ts';

export const identitySubgraph = defineSubgraph<IdentityServices>({
  name: 'identity',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: identityEntities,
  migrations: identityMigrations,
  createServices: createIdentityServices,
  resolvers: identityResolvers,
  jobs: identityJobs,
  events: (services) => ({
    'project.deleted': async (event) => await services.projectDeleted(event.payload.projectId),
    'oidc-client.deleted': async (event) =>
      await services.oidcClientDeleted(event.payload.projectId, event.payload.clientId),
  }),
  // The first signing key, so the first token does not pay for it; the broadcasts its caches follow (the mail queue's
  // job starts just after, by the platform).
  start: async (services) => {
    await services.keys.ensureCurrent();
    await services.broadcasts.start();
  },
  stop: async (services) => {
    await services.broadcasts.stop();
    services.mail.close();
  },
});
