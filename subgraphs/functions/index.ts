// Edge functions subgraph: functions and their step engine, invoke, secrets, webhooks, cron, e-mail,
// executions. A definition only: the platform's startSubgraph opens its database, runs its migrations and serves it.
import { defineSubgraph } from '../../platform/subgraph.ts';
import { functionsJobs } from './jobs/index.ts';
import { functionsMigrations } from './migrations/index.ts';
import { functionsResolvers } from './resolvers/index.ts';
import { createFunctionsServices, type FunctionsServices } from './services/index.ts';

export const functionsSubgraph = defineSubgraph<FunctionsServices>({
  name: 'functions',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: functionsMigrations,
  createServices: createFunctionsServices,
  resolvers: functionsResolvers,
  jobs: functionsJobs,
  // A deleted project's functions, secrets, receivers, cron jobs, e-mail settings and executions go with it. End-user
  // and storage events (published only for projects with a subscription wanting them) become event deliveries.
  events: (services) => ({
    'project.deleted': async (event) => await services.removeProject(event.payload.projectId),
    'identity.user.registered': async (event) => await services.eventDeliveries.emitPlatform(event),
    'identity.user.signed_in': async (event) => await services.eventDeliveries.emitPlatform(event),
    'storage.object.created': async (event) => await services.eventDeliveries.emitPlatform(event),
    'storage.object.deleted': async (event) => await services.eventDeliveries.emitPlatform(event),
  }),
  start: async (services) => {
    await services.receivers.start(services.databaseUrl, services.logger);
    await services.planLimits.listen(services.databaseUrl, services.logger);
  },
  stop: async (services) => {
    await services.runQuota.stop();
    await services.planLimits.stop();
    await services.receivers.stop();
    await services.hot.close();
  },
});
