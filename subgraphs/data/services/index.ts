// The data subgraph's services: provisioning of each project's schema and roles, the pools that reach
// them, the live catalog, the nine actions and realtime.
import pg from 'pg';
import { createSecretBox } from '../../../platform/crypto.ts';
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { createActions } from './actions.ts';
import { createCatalog } from './catalog.ts';
import { createHookOutbox } from './hook-outbox.ts';
import { createDataHooks } from './hooks.ts';
import { schemaNameOf } from './names.ts';
import { createProjectPools } from './pools.ts';
import { createProvisioning } from './provisioning.ts';
import { createRealtime } from './realtime.ts';

export type DataServices = Awaited<ReturnType<typeof createDataServices>>;

/** Creates the data services over the platform database. */
export async function createDataServices({ config, logger, databaseUrl, router }: SubgraphDeps) {
  const log = logger.child({ component: 'data' });
  const admin = new pg.Pool({ connectionString: databaseUrl, max: 4, application_name: 'tessera-data-admin' });
  admin.on('error', (err) => log.warn({ err: err.message }, 'data: idle admin connection failed'));
  const box = createSecretBox(config.internalSecret!, 'data:project-roles');
  const provisioning = createProvisioning({ admin, box, statementTimeoutMs: config.dataStatementTimeoutMs, logger: log });
  const pools = createProjectPools({ databaseUrl, maxConnections: config.dataMaxConnections, size: config.dataPoolSize, logger: log });
  const catalog = createCatalog({ databaseUrl, logger: log });
  const realtime = createRealtime({ admin, databaseUrl, logger: log });
  const hooks = createDataHooks({ router, databaseUrl, logger: log, maxDepth: config.hookMaxDepth });
  const outbox = createHookOutbox({ admin, hooks, logger: log });
  const actions = createActions({ admin, provisioning, pools, catalog, realtime, hooks, outbox });

  return {
    provisioning,
    pools,
    catalog,
    realtime,
    actions,
    hooks,
    subscriber: actions.subscriber,
    projectSchema: { schemaOf: schemaNameOf, apiUrl: () => `${config.issuer}/v1` },

    /** `project.created`: the project's schema and roles. */
    async onProjectCreated(projectId: string): Promise<void> {
      await provisioning.create(projectId);
      log.info({ project: projectId }, 'data: project schema ready');
    },
    /** `project.deleted`: pool closed, schema and roles dropped. */
    async onProjectDeleted(projectId: string): Promise<void> {
      await pools.close(projectId);
      await catalog.announce(admin, schemaNameOf(projectId)).catch(() => {});
      await provisioning.drop(projectId);
      log.info({ project: projectId }, 'data: project schema dropped');
    },
    /** `publication.changed`: the table's change trigger on or off. */
    async onPublicationChanged(projectId: string, table: string, enabled: boolean): Promise<void> {
      if (!(await provisioning.load(projectId))) return; // deleted since
      await realtime.setPublication(projectId, schemaNameOf(projectId), table, enabled);
    },

    async start(): Promise<void> {
      await provisioning.init();
      await realtime.start();
      await hooks.start();
      outbox.start();
      await catalog.start();
    },
    async stop(): Promise<void> {
      await outbox.stop();
      await catalog.stop();
      await hooks.stop();
      await realtime.stop();
      await pools.closeAll();
      await admin.end();
    },
  };
}
