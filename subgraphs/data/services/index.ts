// The data subgraph's services: provisioning of each project's database and roles, the pools that reach
// them, the live catalog, the nine actions and realtime.
import { createSecretBox } from '../../../platform/crypto.ts';
import { AppError } from '../../../platform/errors.ts';
import { graphqlLimitsOf } from '../../../platform/graphql-limits.ts';
import { trackPool, trackProjectServers, trackRealtime, untrackPool } from '../../../platform/metrics.ts';
import type { SubgraphDeps } from '../../../platform/subgraph.ts';
import { createActions } from './actions.ts';
import { createCatalog } from './catalog.ts';
import { createHookOutbox } from './hook-outbox.ts';
import { createMigrations } from './migrations.ts';
import { createDataHooks } from './hooks.ts';
import { schemaNameOf } from './names.ts';
import { budgetFor, createProjectPools, shortfallOf } from './pools.ts';
import { createProvisioning } from './provisioning.ts';
import { createRealtime } from './realtime.ts';
import { createRealtimeSharing } from './realtime-sharing.ts';
import { createPgPool } from '../../../platform/pg-pool.ts';
import { createPlanLimitsReader } from '../../../platform/plan-limits.ts';
import { createStatementTimeSharing } from './statement-time-sharing.ts';
import { createDatabaseQuota, type DatabaseTotals } from './usage.ts';
import { isUuid } from '../../../platform/ids.ts';
import { createBackendPriority } from './backend-priority.ts';
import { createFleet, createFleetPools, DEFAULT_SERVER, type FleetServer } from './fleet.ts';
import { createServers } from './servers.ts';
import {
  announceLocally,
  publishBroadcastNow,
  startBroadcastListener,
  type BroadcastListener,
} from '../../../platform/broadcast.ts';
import type { ProjectPools } from './pools.ts';
import { schedulerOf } from '../../../platform/jobs.ts';
import { createMoveHolds } from './move-hold.ts';
import { createMoves } from './moves.ts';

export type DataServices = Awaited<ReturnType<typeof createDataServices>>;

/** Events of a project deleted since are done with: its database is gone, or will never be made. */
function ignoreDeleted(err: unknown): undefined {
  if (err instanceof AppError && err.code === 'NOT_FOUND') return undefined;
  throw err;
}

/** Connections left to the platform's own pools, schedulers and listeners (~40 in one-process mode) and to other clients. */
const PLATFORM_RESERVE = 60;

/** How often /metrics' per-server projects, reachability and database bytes are read again. */
const SERVER_SAMPLE_MS = 30_000;

/** Creates the data services over the platform database (and the projects' server, by default the same). */
export async function createDataServices(deps: SubgraphDeps) {
  const { config, logger, databaseUrl, router } = deps;
  const log = logger.child({ component: 'data' });
  const admin = createPgPool(
    { connectionString: databaseUrl, max: 4, application_name: 'tessera-data-admin' },
    log,
    'data admin',
  );
  const serverUrl = config.projectsDatabaseUrl ?? databaseUrl;
  // Each project's plan (connections, statement time, ...): asked through tenant management, emptied by `plans.changed`.
  const planLimits = createPlanLimitsReader(router);
  const box = createSecretBox(config.internalSecret!, 'data:project-roles');
  // The project servers (fleet.ts): `default` is serverUrl; the operator registers more.
  const fleet = createFleet({
    admin,
    box: createSecretBox(config.internalSecret!, 'data:servers'),
    defaultUrl: serverUrl,
    logger: log,
  });
  const provisioning = createProvisioning({
    admin,
    platformUrl: databaseUrl,
    serverUrl,
    servers: fleet,
    box,
    secret: config.internalSecret!,
    statementTimeoutMs: config.dataStatementTimeoutMs,
    connectionLimit: config.dataProjectConnectionLimit,
    tempFileLimitKb: config.dataTempFileLimitKb,
    logger: log,
  });
  // Each project server has pools of its own: its budget, fair shares and statement clock (pools.ts).
  const serverPools = (server: FleetServer): ProjectPools => {
    const made = createProjectPools({
      databaseUrl: server.url,
      maxConnections: config.dataMaxConnections,
      size: config.dataPoolSize,
      waitMs: config.dataPoolWaitMs,
      statementTimeoutMs: config.dataStatementTimeoutMs,
      cancelBackend: (pid) => provisioning.cancelBackend(pid, server.id),
      limits: planLimits,
      onBooked: (projectId, ms) => statementTime.booked(projectId, ms),
      // Long statements yield the CPU to short ones when the server runs on this machine (backend-priority.ts).
      priority: createBackendPriority(server.url, log),
      logger: log.child({ server: server.id }),
    });
    // The default server's budget is fitted at start; another server's when this process first reaches it.
    if (server.id !== DEFAULT_SERVER)
      void fitBudget(server.id, made).catch((err: Error) =>
        log.warn(
          { err: err.message, server: server.id },
          'data: could not read the max_connections of a project server',
        ),
      );
    return made;
  };
  const pools = createFleetPools({ fleet, make: serverPools });
  // Statement time booked by the other data processes counts here too (and ours there).
  const statementTime = createStatementTimeSharing({
    addRemote: (projectId, ms, at) => pools.addRemoteTime(projectId, ms, at),
    logger: log,
  });
  const catalog = createCatalog({ databaseUrl, logger: log });
  // The plan's max_realtime_subscribers counts the other data processes' subscribers too (as they last said).
  const realtimeCounts = createRealtimeSharing({ local: () => realtime.localCounts(), logger: log });
  const realtime = createRealtime({
    planLimits,
    elsewhere: (projectId) => realtimeCounts.elsewhere(projectId),
    admin,
    pools,
    databaseUrl: serverUrl,
    serverUrl: async (serverId) => (await fleet.get(serverId)).url,
    logger: log,
    maxSubscribers: config.realtimeMaxSubscribers,
  });
  const hooks = createDataHooks({ router, databaseUrl, logger: log, maxDepth: config.hookMaxDepth, admin });
  const quota = createDatabaseQuota({ db: (role) => pools.get(role), planLimits });
  const outbox = createHookOutbox({ admin, pools, provisioning, hooks, logger: log });
  // Writes of a project being switched to another server wait (move-hold.ts); they then run where the row says.
  const holds = createMoveHolds({ followMove: async (projectId) => await relocated(projectId) });
  const actions = createActions({
    holds,
    admin,
    provisioning,
    pools,
    catalog,
    realtime,
    hooks,
    outbox,
    maxRows: config.dataMaxRows,
    maxResultBytes: config.dataMaxResultBytes,
    quota,
  });
  // The schema endpoint and migrations (a migration's SQL runs through the actions, as a rawSQL script does).
  const migrations = createMigrations({
    provisioning,
    pools,
    catalog,
    actions,
    announce: async (schema) => await catalog.announce(admin, schema).catch(() => {}),
  });

  /**
   * A server that accepts fewer connections than the budget (an external PostgreSQL at its default of 100) would
   * refuse the platform's own connections once projects took them all: the budget is held to the server's
   * `max_connections` minus what the platform and other clients need (PLATFORM_RESERVE), with a warning.
   */
  const fitBudget = async (serverId: string, pools: ProjectPools): Promise<void> => {
    const server = await provisioning.serverPool(serverId);
    const { rows } = await server.query<{
      max: number;
      reserved: number;
      open: number;
      projects: number;
    }>(
      `select current_setting('max_connections')::int as max, current_setting('superuser_reserved_connections')::int as reserved,
              (select count(*)::int from pg_stat_activity where backend_type = 'client backend' and pid <> pg_backend_pid()) as open,
              (select count(*)::int from pg_stat_activity where application_name = 'tessera-data') as projects`,
    );
    const budget = budgetFor(config.dataMaxConnections, rows[0]!.max, rows[0]!.reserved + PLATFORM_RESERVE);
    if (budget < config.dataMaxConnections) {
      pools.setBudget(budget);
      log.warn(
        {
          configured: config.dataMaxConnections,
          budget: pools.budget(),
          max_connections: rows[0]!.max,
          server: serverId,
        },
        `data: the server's max_connections leaves room for ${pools.budget()} project connections, fewer than TESSERA_DATA_MAX_CONNECTIONS; raise max_connections to at least the budget + ${PLATFORM_RESERVE + rows[0]!.reserved}`,
      );
    }
    // Several data instances (and every other process) share the server: what they hold already plus this budget.
    const short = shortfallOf(pools.budget(), rows[0]!.max, rows[0]!.reserved, rows[0]!.open);
    if (short > 0)
      log.warn(
        {
          budget: pools.budget(),
          open_by_others: rows[0]!.open,
          project_connections_of_other_instances: rows[0]!.projects,
          max_connections: rows[0]!.max,
          short,
          server: serverId,
        },
        `data: connections already open on the server (${rows[0]!.open}: other Tessera processes and clients) plus this instance's budget (${pools.budget()}) exceed max_connections − ${rows[0]!.reserved} reserved by ${short}; the server will refuse connections once the data instances fill their budgets: size max_connections ≥ data instances × TESSERA_DATA_MAX_CONNECTIONS + ~5 per process + other clients (README, "Running across hosts")`,
      );
  };

  /**
   * A project moved (`data.project.moved`, heard by every data process, the mover's too): its cached role and its
   * connections to the old server go; its realtime listener follows it with its subscribers.
   */
  const relocated = async (projectId: string): Promise<void> => {
    provisioning.forget(projectId);
    await pools.close(projectId);
    const role = await provisioning.load(projectId);
    if (role) await realtime.relocate(role);
  };
  let moves: BroadcastListener | undefined;
  // Online moves and drains (moves.ts), run by the jobs data.project.move and data.server.drain.
  const projectMoves = createMoves({
    admin,
    provisioning,
    fleet,
    holds,
    announceMoved: async (projectId, serverId) => {
      await publishBroadcastNow(admin, 'data.project.moved', { projectId, serverId });
      announceLocally('data.project.moved', { projectId, serverId });
    },
    enqueue: async (name, data) => await schedulerOf(deps, 'data').enqueue(name, data),
    pgBin: config.pgBin || undefined,
    logger: log,
  });
  // A server whose URL changed, or that was removed: the connections made with the old URL close.
  fleet.onChanged((ids) => {
    for (const id of ids) {
      if (id === DEFAULT_SERVER) continue;
      void pools.closeServer(id);
      void provisioning.forgetServer(id);
    }
  });

  // The operator's view of the fleet (health, usage, audited changes), and its /metrics sample.
  const servers = createServers({ admin, fleet, logger: log });
  let untrackServers: (() => void) | undefined;
  let sampling: NodeJS.Timeout | undefined;
  const sampleServers = (): void =>
    void servers
      .sample()
      .catch((err: Error) => log.warn({ err: err.message }, 'data: could not sample the project servers for /metrics'));

  let untrackRealtime: (() => void) | undefined;
  return {
    provisioning,
    /** The project servers (registry, placement). */
    fleet,
    /** The operator's servers: health, usage, audited changes (servers.ts). */
    servers,
    /** Every data process drops what it holds of a moved project (see `relocated`); `moves` publishes it. */
    async announceMoved(projectId: string, serverId: string): Promise<void> {
      await publishBroadcastNow(admin, 'data.project.moved', { projectId, serverId });
      announceLocally('data.project.moved', { projectId, serverId });
    },
    relocated,
    /** Online moves of project databases between servers, and drains (moves.ts). */
    moves: projectMoves,
    /** Writes held by a move's switch (move-hold.ts). */
    holds,
    pools,
    /** The projects' plans as tenant management says (connections, statement time, database size, realtime subscribers). */
    planLimits,
    catalog,
    realtime,
    actions,
    migrations,
    hooks,
    /** The after-hook outbox; swept by the recurring job jobs/sweep-hook-outbox.ts. */
    outbox,
    /** The database size of each project against its plan (max_database_rows, max_database_bytes). */
    quota,
    subscriber: actions.subscriber,
    projectSchema: { schemaOf: schemaNameOf, apiUrl: () => `${config.issuer}/v1` },
    limits: { realtimeMaxSubscribers: config.realtimeMaxSubscribers, graphql: graphqlLimitsOf(config) },

    /**
     * Rows and bytes of the given projects' databases together (an operator's tenant row). A project whose database is
     * not made yet counts nothing: reading never provisions.
     */
    async databaseTotals(projectIds: readonly string[]): Promise<DatabaseTotals> {
      const roles = await Promise.all(projectIds.filter((id) => isUuid(id)).map((id) => provisioning.load(id)));
      return await quota.totals(roles.filter((r) => r !== undefined));
    },
    /** `project.created`: the project's database and roles (unless its first request made them already). */
    async onProjectCreated(projectId: string): Promise<void> {
      await provisioning.ensure(projectId).catch(ignoreDeleted);
    },
    /** `project.deleted`: listeners and pool closed, database and roles dropped. */
    async onProjectDeleted(projectId: string): Promise<void> {
      realtime.closeProject(projectId);
      quota.forget(projectId);
      await pools.close(projectId);
      await catalog.announce(admin, schemaNameOf(projectId)).catch(() => {});
      await provisioning.drop(projectId);
      log.info({ project: projectId }, 'data: project database dropped');
    },
    /** The tables of a project's database (the realtime switch and database hooks ask; `_projectTables`). */
    async tableNames(projectId: string): Promise<string[]> {
      const role = await provisioning.ensure(projectId);
      return await catalog.tableNames(pools.get(role), role.schemaName);
    },
    /** `publication.changed`: the table's change trigger on or off. */
    async onPublicationChanged(projectId: string, table: string, enabled: boolean): Promise<void> {
      const role = await provisioning.ensure(projectId).catch(ignoreDeleted);
      if (role) await realtime.setPublication(role, table, enabled);
    },

    async start(): Promise<void> {
      // /metrics: the platform pool, and the project connections as one pool (they share one budget).
      trackPool('data:admin', admin);
      trackPool('data:projects', {
        get totalCount() {
          return pools.stats().open;
        },
        get idleCount() {
          return pools.stats().idle;
        },
        get waitingCount() {
          return pools.stats().waiting;
        },
      });
      untrackRealtime = trackRealtime(() => ({ ...realtime.stats(), elsewhere: realtimeCounts.total() }));
      // Per server: projects, reachability and database bytes are sampled (a cheap periodic read, never per scrape);
      // the connections this process holds there are read at each scrape.
      untrackServers = trackProjectServers(() =>
        servers.samples().map((s) => ({ ...s, connections: pools.server(s.server)?.stats().open ?? 0 })),
      );
      await fleet.init();
      await fleet.listen(databaseUrl);
      moves = await startBroadcastListener({ url: databaseUrl, logger: log });
      moves.on('data.project.moved', (m) => {
        void relocated(m.projectId).catch((err: Error) =>
          log.warn({ err: err.message, project: m.projectId }, 'data: a moved project was not followed'),
        );
      });
      projectMoves.listen(moves);
      // Missed messages: every cached role is read again when next used (their connections age out).
      moves.onReset(() => provisioning.forgetAll());
      await provisioning.init();
      await fitBudget(DEFAULT_SERVER, pools.ofServer(await fleet.get(DEFAULT_SERVER)));
      await planLimits.listen(databaseUrl, log);
      await statementTime.start(databaseUrl);
      await realtime.start();
      await realtimeCounts.start(databaseUrl);
      await hooks.start();
      await catalog.start();
      sampleServers();
      sampling = setInterval(sampleServers, SERVER_SAMPLE_MS);
      sampling.unref();
    },
    async stop(): Promise<void> {
      untrackPool('data:admin');
      untrackPool('data:projects');
      untrackRealtime?.();
      clearInterval(sampling);
      untrackServers?.();
      await outbox.stop();
      await moves?.stop();
      await fleet.stop();
      await planLimits.stop();
      await catalog.stop();
      await hooks.stop();
      await realtimeCounts.stop();
      await realtime.stop();
      await pools.closeAll();
      await statementTime.stop();
      await provisioning.stop();
      await admin.end();
    },
  };
}
