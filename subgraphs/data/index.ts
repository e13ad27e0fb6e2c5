// Data API subgraph: queries, aggregates, transactions, vector search and SQL over each project's schema,
// and realtime change streams. Reacts to the project lifecycle and publication switches through events.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import { defineSubgraph, type SubgraphContext } from '../../platform/subgraph.ts';
import { dataJobs } from './jobs/index.ts';
import { dataMigrations } from './migrations/index.ts';
import { actionResolvers } from './resolvers/actions.ts';
import { projectResolvers } from './resolvers/project.ts';
import { schemaResolvers } from './resolvers/schema.ts';
import { moveResolvers } from './resolvers/moves.ts';
import { serverResolvers } from './resolvers/servers.ts';
import { createDataServices, type DataServices } from './services/index.ts';
import { createRealtimeHttp, REALTIME_PREFIX } from './realtime/server.ts';

export const dataSubgraph = defineSubgraph<DataServices>({
  name: 'data',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: [],
  migrations: dataMigrations,
  createServices: createDataServices,
  resolvers: {
    ...actionResolvers,
    ...projectResolvers,
    ...schemaResolvers,
    Query: { ...actionResolvers.Query, ...schemaResolvers.Query, ...serverResolvers.Query, ...moveResolvers.Query },
    Mutation: {
      ...actionResolvers.Mutation,
      ...schemaResolvers.Mutation,
      ...serverResolvers.Mutation,
      ...moveResolvers.Mutation,
    },
  } as unknown as GraphQLResolverMap<SubgraphContext<DataServices>>,
  events: (services) => ({
    'project.created': async (e) => await services.onProjectCreated(e.payload.projectId),
    'project.deleted': async (e) => await services.onProjectDeleted(e.payload.projectId),
    'publication.changed': async (e) =>
      await services.onPublicationChanged(e.payload.projectId, e.payload.table, e.payload.enabled),
  }),
  http: { prefix: REALTIME_PREFIX, create: createRealtimeHttp },
  jobs: dataJobs,
  start: async (services) => await services.start(),
  stop: async (services) => await services.stop(),
});
