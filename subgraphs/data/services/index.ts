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
import { budgetFor, createProjectPools } from './pools.ts';
import { createProvisioning } from './provisioning.ts';
import { createRealtime } from './realtime.ts';

export type DataServices = Awaited<ReturnType<typeof createDataServices>>;

/** Connections left to the platform's own pools, schedulers and listeners (~40 in one-process mode) and to other clients. */
const PLATFORM_RESERVE = 60;

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

  /**
   * A server that accepts fewer connections than the budget (an external PostgreSQL at its default of 100) would
   * refuse the platform's own connections once projects took them all: the budget is held to the server's
   * `max_connections` minus what the platform and other clients need (PLATFORM_RESERVE), with a warning.
   */
  const fitBudget = async (): Promise<void> => {
    const { rows } = await admin.query<{ max: number; reserved: number }>(
      `select current_setting('max_connections')::int as max, current_setting('superuser_reserved_connections')::int as reserved`,
    );
    const budget = budgetFor(config.dataMaxConnections, rows[0]!.max, rows[0]!.reserved + PLATFORM_RESERVE);
    if (budget < config.dataMaxConnections) {
      pools.setBudget(budget);
      log.warn(
        { configured: config.dataMaxConnections, budget: pools.budget(), max_connections: rows[0]!.max },
        `data: the server's max_connections leaves room for ${pools.budget()} project connections, fewer than TESSERA_DATA_MAX_CONNECTIONS; raise max_connections to at least the budget + ${PLATFORM_RESERVE + rows[0]!.reserved}`,
      );
    }
  };

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
      await fitBudget();
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
