// Storage subgraph: objects, folders, usage and ACL policies. Bytes are streamed by the front door
// (REST) or by the upload resolver (GraphQL multipart) into platform/blob-store.
import { defineSubgraph } from '../../platform/subgraph.ts';
import { storageEntities } from './entities/index.ts';
import { storageMigrations } from './migrations/index.ts';
import { storageResolvers } from './resolvers/index.ts';
import { createStorageServices, type StorageServices } from './services/index.ts';
import { storageJobs } from './jobs/index.ts';

export const storageSubgraph = defineSubgraph<StorageServices>({
  name: 'storage',
  schemaFile: new URL('./schema.graphql', import.meta.url),
  entities: storageEntities,
  migrations: storageMigrations,
  createServices: createStorageServices,
  resolvers: storageResolvers,
  jobs: storageJobs,
  events: (s) => ({
    // A deleted project's objects, bytes, policies and limits go with it (idempotent: events may repeat).
    'project.deleted': async (event) => {
      const { projectId } = event.payload;
      const removed = await s.objects.purgeProject(projectId);
      await s.policies.purge(projectId);
      await s.limits.forget(projectId);
      s.logger.info({ projectId, removed }, 'storage of a deleted project removed');
    },
  }),
  start: async (s) => {
    await s.planLimits.listen(s.databaseUrl, s.logger);
  },
  stop: async (s) => {
    await s.planLimits.stop();
    await s.blobs.close();
  },
});
