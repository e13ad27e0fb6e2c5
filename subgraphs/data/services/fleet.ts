// The fleet of project servers (issue 29): the PostgreSQL servers where project databases live. `default` is the
// configured server (TESSERA_PROJECTS_DATABASE_URL, or the platform's own), always present, its URL never stored; the
// operator registers more (`data_servers`, each URL sealed under the internal secret like other secrets) with a
// weight and a state:
//   active     new projects may be placed on it;
//   draining   no new project, and `drain` moves its projects elsewhere;
//   read-only  no new project and no project moved onto it (its projects keep working).
// Where a project lives is one row of the platform database (`data_project_roles.server_id`). Every data process
// keeps the registry in memory and reloads it on the `data.servers.changed` broadcast (and when its listening
// connection came back, since it may have missed one); a process asked for a server it does not know reads again
// before it answers 404.
//
// Placement: a new project goes to the active server with the fewest projects per unit of weight (weight 0: never
// chosen), ties to the server with the fewest projects, then by name. It is decided in the project's provisioning
// transaction, under its advisory lock.
import pg from 'pg';
import {
  announceLocally,
  publishBroadcastNow,
  startBroadcastListener,
  type BroadcastListener,
} from '../../../platform/broadcast.ts';
import type { SecretBox } from '../../../platform/crypto.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import { inPgTransaction } from '../../../platform/pg-pool.ts';
import type { ProjectPool, ProjectPools } from './pools.ts';
import type { ProjectRole } from './provisioning.ts';

export const SERVER_STATES = ['active', 'draining', 'read-only'] as const;
export type ServerState = (typeof SERVER_STATES)[number];
export const DEFAULT_SERVER = 'default';
const SERVER_ID = /^[a-z][a-z0-9-]{0,39}$/;

export type FleetServer = {
  id: string;
  state: ServerState;
  weight: number;
  /** The server's URL as the platform role (pathname: its maintenance database). */
  url: string;
  /** `default`: the configured server, whose URL comes from the configuration. */
  builtIn: boolean;
  createdAt: string;
  updatedAt: string;
};

/** What a server tells about itself when it is registered (and what the operator's views show). */
export type ServerProbe = {
  version: string;
  versionNum: number;
  maxConnections: number;
  superuser: boolean;
  walLevel: string;
};

/** What provisioning needs of the fleet: a server by id, and the server a new project goes to. */
export type ServerDirectory = {
  get(id: string): Promise<FleetServer>;
  place(db: Pick<pg.PoolClient, 'query'>): Promise<string>;
};

/** A directory of the one configured server (the fleet before any is registered, and unit tests). */
export function singleServer(url: string): ServerDirectory {
  const server: FleetServer = {
    id: DEFAULT_SERVER,
    state: 'active',
    weight: 1,
    url,
    builtIn: true,
    createdAt: new Date(0).toISOString(),
    updatedAt: new Date(0).toISOString(),
  };
  return {
    get: async (id) => {
      if (id !== DEFAULT_SERVER) throw errors.notFound('server', id);
      return server;
    },
    place: async () => DEFAULT_SERVER,
  };
}

/** Reads what the platform role may do on the server at `url` (a short connection; refused servers answer 400). */
export async function probeServer(url: string): Promise<ServerProbe> {
  const c = new pg.Client({
    connectionString: url,
    application_name: 'tessera-data-fleet',
    connectionTimeoutMillis: 5_000,
    statement_timeout: 5_000,
  });
  c.on('error', () => {});
  try {
    await c.connect();
  } catch (err) {
    throw errors.badRequest(`url: the server could not be reached or refused the login: ${(err as Error).message}`, {
      field: 'url',
    });
  }
  try {
    const { rows } = await c.query<{
      version: string;
      num: number;
      max: number;
      su: boolean;
      createdb: boolean;
      createrole: boolean;
      wal: string;
    }>(
      `select current_setting('server_version') as version, current_setting('server_version_num')::int as num,
              current_setting('max_connections')::int as max, current_setting('wal_level') as wal,
              r.rolsuper as su, r.rolcreatedb as createdb, r.rolcreaterole as createrole
         from pg_roles r where r.rolname = current_user`,
    );
    const r = rows[0]!;
    if (!r.su && !(r.createdb && r.createrole))
      throw errors.badRequest('url: the role of this URL needs CREATEDB and CREATEROLE (or superuser) on the server', {
        field: 'url',
      });
    return { version: r.version, versionNum: r.num, maxConnections: r.max, superuser: r.su, walLevel: r.wal };
  } finally {
    await c.end().catch(() => {});
  }
}

type Row = {
  id: string;
  url_sealed: string | null;
  weight: number;
  state: ServerState;
  created_at: Date;
  updated_at: Date;
};

export type Fleet = ReturnType<typeof createFleet>;

/**
 * Runs after a registry change inside its platform transaction (the operator audit row: a change without its row
 * cannot be).
 */
export type FleetAudit = (db: Pick<pg.PoolClient, 'query'>) => Promise<void>;

/** The registry of project servers over the platform database (`admin`); `defaultUrl` is the configured server. */
export function createFleet(opts: { admin: pg.Pool; box: SecretBox; defaultUrl: string; logger: Logger }) {
  const { admin, box, logger } = opts;
  let servers = new Map<string, FleetServer>();
  let loading: Promise<void> | undefined;
  let listener: BroadcastListener | undefined;
  const changed = new Set<(ids: string[]) => void>();

  const serverOf = (r: Row): FleetServer => ({
    id: r.id,
    state: r.state,
    weight: r.weight,
    url: r.url_sealed === null ? opts.defaultUrl : box.decrypt(r.url_sealed),
    builtIn: r.url_sealed === null,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
  });

  const load = async (): Promise<void> => {
    const { rows } = await admin.query<Row>(
      'select id, url_sealed, weight, state, created_at, updated_at from data_servers order by id',
    );
    const next = new Map(rows.map((r) => [r.id, serverOf(r)]));
    const ids = [...new Set([...servers.keys(), ...next.keys()])].filter(
      (id) => servers.get(id)?.url !== next.get(id)?.url,
    );
    servers = next;
    // A server whose URL changed (or that went away): the connections made with the old URL are closed by the owners.
    if (ids.length > 0) for (const h of changed) h(ids);
  };
  /** Reads the registry again (callers arriving while a read runs share it). */
  const reload = (): Promise<void> => {
    loading ??= load().finally(() => {
      loading = undefined;
    });
    return loading;
  };

  /** Runs `fn` on `admin`, or in a transaction that also runs `audit` when one is given. */
  const audited = async <T>(audit: FleetAudit | undefined, fn: (db: Pick<pg.PoolClient, 'query'>) => Promise<T>) => {
    if (!audit) return await fn(admin);
    return await inPgTransaction(admin, async (c) => {
      const out = await fn(c);
      await audit(c);
      return out;
    });
  };

  const announce = async (serverId: string): Promise<void> => {
    await publishBroadcastNow(admin, 'data.servers.changed', { serverId });
    announceLocally('data.servers.changed', { serverId });
  };

  const get = async (id: string): Promise<FleetServer> => {
    const hit = servers.get(id);
    if (hit) return hit;
    await reload();
    const s = servers.get(id);
    if (!s) throw errors.notFound('server', id);
    return s;
  };

  const checkId = (id: string): void => {
    if (!SERVER_ID.test(id))
      throw errors.validation('id', 'a server id is 1-40 of a-z, 0-9 and "-", starting with a letter');
  };
  const checkWeight = (weight: number): void => {
    if (!Number.isInteger(weight) || weight < 0 || weight > 1000)
      throw errors.validation('weight', 'an integer from 0 to 1000');
  };
  const checkState = (state: string): ServerState => {
    if (!(SERVER_STATES as readonly string[]).includes(state))
      throw errors.validation('state', `one of ${SERVER_STATES.join(', ')}`);
    return state as ServerState;
  };
  const checkUrl = (url: string): string => {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      throw errors.validation('url', 'a postgres:// URL');
    }
    if (u.protocol !== 'postgres:' && u.protocol !== 'postgresql:') throw errors.validation('url', 'a postgres:// URL');
    return url;
  };

  return {
    /** Reads the registry (once per start). */
    init: reload,
    /** Reloads on `data.servers.changed` (and after the listening connection came back: it may have missed one). */
    async listen(databaseUrl: string): Promise<void> {
      listener = await startBroadcastListener({ url: databaseUrl, logger });
      listener.on('data.servers.changed', () => void reload().catch(() => {}));
      listener.onReset(() => void reload().catch(() => {}));
    },
    async stop(): Promise<void> {
      await listener?.stop();
      listener = undefined;
    },
    /** Called with the ids of servers whose URL changed or that were removed (connections to close). */
    onChanged(handler: (ids: string[]) => void): void {
      changed.add(handler);
    },

    get,
    /** The server if known here (no read). */
    peek: (id: string): FleetServer | undefined => servers.get(id),
    /** Every registered server, by id. */
    list: (): FleetServer[] => [...servers.values()],
    reload,

    /**
     * The server a new project goes to: the active server with the fewest projects per unit of weight (counted in
     * `db`, the provisioning transaction). 503 when no server takes new projects.
     */
    async place(db: Pick<pg.PoolClient, 'query'>): Promise<string> {
      await reload();
      const { rows } = await db.query<{ server_id: string; n: number }>(
        'select server_id, count(*)::int as n from data_project_roles where database_name is not null group by server_id',
      );
      const counts = new Map(rows.map((r) => [r.server_id, r.n]));
      const candidates = [...servers.values()]
        .filter((s) => s.state === 'active' && s.weight > 0)
        .map((s) => ({ id: s.id, n: counts.get(s.id) ?? 0, score: (counts.get(s.id) ?? 0) / s.weight }))
        .sort((a, b) => a.score - b.score || a.n - b.n || a.id.localeCompare(b.id));
      if (!candidates[0])
        throw new AppError(
          'SERVICE_UNAVAILABLE',
          'No project server takes new projects (every server is draining, read-only or of weight 0)',
          { reason: 'no_active_server' },
        );
      return candidates[0].id;
    },

    /** Projects per server (databases made). */
    async projectCounts(): Promise<Map<string, number>> {
      const { rows } = await admin.query<{ server_id: string; n: number }>(
        'select server_id, count(*)::int as n from data_project_roles where database_name is not null group by server_id',
      );
      return new Map(rows.map((r) => [r.server_id, r.n]));
    },

    /** Registers a server after checking the platform role may create databases and roles on it. */
    async add(
      input: { id: string; url: string; weight?: number; state?: string },
      audit?: FleetAudit,
    ): Promise<FleetServer> {
      checkId(input.id);
      checkUrl(input.url);
      const weight = input.weight ?? 1;
      checkWeight(weight);
      const state = checkState(input.state ?? 'active');
      await probeServer(input.url);
      await audited(audit, async (db) => {
        const { rowCount } = await db.query(
          `insert into data_servers (id, url_sealed, weight, state) values ($1, $2, $3, $4) on conflict (id) do nothing`,
          [input.id, box.encrypt(input.url), weight, state],
        );
        if (rowCount === 0) throw errors.conflict(`A server named ${input.id} exists already`, { id: input.id });
      });
      logger.info({ server: input.id, state, weight }, 'data: project server registered');
      await announce(input.id);
      return await get(input.id);
    },

    /** Changes a server's state, weight or URL (a new URL is checked like a new server's). */
    async update(
      id: string,
      patch: { state?: string; weight?: number; url?: string },
      audit?: FleetAudit,
    ): Promise<FleetServer> {
      const server = await get(id);
      const state = patch.state === undefined ? undefined : checkState(patch.state);
      if (patch.weight !== undefined) checkWeight(patch.weight);
      if (patch.url !== undefined) {
        if (server.builtIn)
          throw errors.badRequest('url: the default server is configured by TESSERA_PROJECTS_DATABASE_URL', {
            field: 'url',
          });
        checkUrl(patch.url);
        await probeServer(patch.url);
      }
      await audited(audit, async (db) => {
        await db.query(
          `update data_servers set state = coalesce($2, state), weight = coalesce($3, weight),
                  url_sealed = coalesce($4, url_sealed), updated_at = now() where id = $1`,
          [id, state ?? null, patch.weight ?? null, patch.url === undefined ? null : box.encrypt(patch.url)],
        );
      });
      logger.info(
        { server: id, state, weight: patch.weight, url_changed: patch.url !== undefined },
        'data: project server changed',
      );
      await announce(id);
      await reload();
      return await get(id);
    },

    /** Removes a server holding no project (409 otherwise); the default server stays. */
    async remove(id: string, audit?: FleetAudit): Promise<void> {
      const server = await get(id);
      if (server.builtIn)
        throw errors.conflict('The default server cannot be removed (mark it draining or read-only instead)', { id });
      await audited(audit, async (db) => {
        const { rows } = await db.query<{ n: number }>(
          'select count(*)::int as n from data_project_roles where server_id = $1',
          [id],
        );
        if (rows[0]!.n > 0)
          throw new AppError('SERVER_IN_USE', `The server holds ${rows[0]!.n} project(s): drain it first`, {
            id,
            projects: rows[0]!.n,
          });
        // A project placed meanwhile references the row: the foreign key refuses the delete.
        await db.query('delete from data_servers where id = $1', [id]).catch((err: { code?: string }) => {
          if (err.code === '23503')
            throw new AppError('SERVER_IN_USE', 'A project was placed on the server meanwhile', { id });
          throw err;
        });
      });
      logger.info({ server: id }, 'data: project server removed');
      await announce(id);
      await reload();
    },
  };
}

/** What the fleet's pools need of one server's pools (pools.ts `createProjectPools`). */
type ServerPools = ProjectPools;

/**
 * The data API's connections over the fleet: one set of pools per project server (pools.ts; each with the connection
 * budget and fair shares of its server: a busy server does not take the budget of another), and a project's
 * connections on the server its role names. `make` creates a server's pools the first time one of its projects asks.
 */
export function createFleetPools(opts: {
  fleet: Pick<Fleet, 'get' | 'peek'>;
  make: (server: FleetServer) => ServerPools;
}) {
  const byServer = new Map<string, ServerPools>();
  const of = (server: FleetServer): ServerPools => {
    let p = byServer.get(server.id);
    if (!p) {
      p = opts.make(server);
      byServer.set(server.id, p);
    }
    return p;
  };
  const all = () => [...byServer.values()];
  return {
    /** The server's pools, when this process has made them. */
    server: (serverId: string): ServerPools | undefined => byServer.get(serverId),
    /** The server's pools, made now if needed. */
    ofServer: of,
    /** The servers this process has pools for. */
    servers: (): string[] => [...byServer.keys()],
    /** The budget of the default server's pools (the configured TESSERA_DATA_MAX_CONNECTIONS, or less). */
    budget: (): number => byServer.get(DEFAULT_SERVER)?.budget() ?? 0,
    /** The project's pool, on the server its role names (a server this process does not know yet is read first). */
    get(role: ProjectRole): ProjectPool {
      const known = opts.fleet.peek(role.serverId);
      if (known) return of(known).get(role);
      const ready = opts.fleet.get(role.serverId).then((s) => of(s).get(role));
      return {
        query: ((q: string | pg.QueryConfig, v?: unknown[]) =>
          ready.then((p) => p.query(q, v))) as ProjectPool['query'],
        connect: () => ready.then((p) => p.connect()),
      };
    },
    /** Closes the project's connections on every server (deleted, or moved). */
    async close(projectId: string): Promise<void> {
      await Promise.all(all().map((p) => p.close(projectId)));
    },
    /** Closes a server's pools (its URL changed or it was removed); made again on next use. */
    async closeServer(serverId: string): Promise<void> {
      const p = byServer.get(serverId);
      byServer.delete(serverId);
      await p?.closeAll();
    },
    /** Connections open (and opening), idle, projects and waiting requests, over every server. */
    stats: () =>
      all().reduce(
        (t, p) => {
          const s = p.stats();
          return {
            open: t.open + s.open,
            idle: t.idle + s.idle,
            projects: t.projects + s.projects,
            waiting: t.waiting + s.waiting,
          };
        },
        { open: 0, idle: 0, projects: 0, waiting: 0 },
      ),
    /** Statement time another process booked to a project (books it on every server's clock: only its own server's counts). */
    addRemoteTime(projectId: string, ms: number, at: number): void {
      for (const p of all()) p.addRemoteTime(projectId, ms, at);
    },
    /** The project's connections and statement time on its server (the largest over servers: a move briefly has two). */
    projectStats(projectId: string): { open: number; statementMs: number } {
      return all().reduce(
        (t, p) => {
          const s = p.projectStats(projectId);
          return { open: t.open + s.open, statementMs: Math.max(t.statementMs, s.statementMs) };
        },
        { open: 0, statementMs: 0 },
      );
    },
    async closeAll(): Promise<void> {
      await Promise.all(all().map((p) => p.closeAll()));
    },
  };
}
export type FleetPools = ReturnType<typeof createFleetPools>;
