// The operator's view of the fleet of project servers (fleet.ts holds the registry): each server with its projects and
// its live health (reachable, version, max_connections, connections, bytes of its project databases), and the
// registry's changes with their audit rows. A server's URL leaves this file only redacted: host, port, database and
// user, never the password (answers, log lines and audit rows alike).
import pg from 'pg';
import { writeOperatorAudit, type OperatorActor } from '../../../platform/operator-audit.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Fleet, FleetServer, ServerState } from './fleet.ts';

/** What a server answered when asked just now (nulls when it could not be reached). */
export type ServerHealth = {
  reachable: boolean;
  /** Why it could not be reached (redacted), else null. */
  error: string | null;
  version: string | null;
  maxConnections: number | null;
  /** Connections open to the project databases of this server (by every process). */
  projectConnections: number | null;
  /** Client connections open on the server, by anyone. */
  connections: number | null;
  /** Bytes of the project databases of this server (pg_database_size). */
  databaseBytes: number | null;
  measuredAt: string;
};

/** A project server as the operator sees it. */
export type ServerView = {
  id: string;
  state: ServerState;
  weight: number;
  builtIn: boolean;
  /** `postgres://user@host:port/database`: never the password. */
  url: string;
  host: string;
  port: number;
  database: string;
  user: string;
  projects: number;
  health: ServerHealth;
  createdAt: string;
  updatedAt: string;
};

/** The URL without its password (and without query options, which may carry one). */
export function redactUrl(url: string): { url: string; host: string; port: number; database: string; user: string } {
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    return { url: '(unparsable)', host: '', port: 0, database: '', user: '' };
  }
  const host = u.hostname;
  const port = Number(u.port || 5432);
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || 'postgres';
  const user = decodeURIComponent(u.username);
  const shown = `${u.protocol}//${user ? `${encodeURIComponent(user)}@` : ''}${u.host}/${encodeURIComponent(database)}`;
  return { url: shown, host, port, database, user };
}

/** `text` with every occurrence of the URL's password (raw and encoded) and of the URL itself replaced. */
export function scrubSecret(text: string, url: string): string {
  let out = text.split(url).join('[url]');
  try {
    const u = new URL(url);
    for (const p of [u.password, decodeURIComponent(u.password)])
      if (p.length >= 1) out = out.split(p).join('[redacted]');
  } catch {
    // not a URL: nothing more to hide than the text itself
  }
  return out;
}

/** Rethrows `err` with the URL and its password scrubbed from its message (a driver's text could one day carry them). */
const scrubbed =
  (url: string | undefined) =>
  (err: unknown): never => {
    if (url && err instanceof Error) err.message = scrubSecret(err.message, url);
    throw err;
  };

/** Connects to the server with a short timeout and reads what the operator's view shows. */
export async function inspectServer(url: string, projectDatabases: string[]): Promise<ServerHealth> {
  const measuredAt = new Date().toISOString();
  const c = new pg.Client({
    connectionString: url,
    application_name: 'tessera-data-fleet',
    connectionTimeoutMillis: 3_000,
    statement_timeout: 5_000,
  });
  c.on('error', () => {});
  try {
    await c.connect();
    const { rows } = await c.query<{
      version: string;
      max: number;
      total: number;
      projects: number;
      bytes: string | null;
    }>(
      `select current_setting('server_version') as version, current_setting('max_connections')::int as max,
              (select count(*)::int from pg_stat_activity where backend_type = 'client backend') as total,
              (select count(*)::int from pg_stat_activity where datname = any($1::text[])) as projects,
              (select sum(pg_database_size(d.oid))::text from pg_database d
                where d.datname = any($1::text[]) and has_database_privilege(d.oid, 'CONNECT')) as bytes`,
      [projectDatabases],
    );
    const r = rows[0]!;
    return {
      reachable: true,
      error: null,
      version: r.version,
      maxConnections: r.max,
      projectConnections: r.projects,
      connections: r.total,
      databaseBytes: r.bytes === null ? 0 : Number(r.bytes),
      measuredAt,
    };
  } catch (err) {
    return {
      reachable: false,
      error: scrubSecret((err as Error).message, url),
      version: null,
      maxConnections: null,
      projectConnections: null,
      connections: null,
      databaseBytes: null,
      measuredAt,
    };
  } finally {
    await c.end().catch(() => {});
  }
}

/** The last sample of each server, for /metrics (platform/metrics.ts `trackProjectServers`). */
export type ServerSample = { server: string; projects: number; up: boolean; databaseBytes: number | null };

/** The operator's servers: list, read, add, change, remove (each change audited in its own transaction). */
export function createServers(opts: { admin: pg.Pool; fleet: Fleet; logger: Logger }) {
  const { admin, fleet, logger } = opts;
  const samples = new Map<string, ServerSample>();

  /** Project databases by server (the rows saying where projects live). */
  const databasesByServer = async (): Promise<Map<string, string[]>> => {
    const { rows } = await admin.query<{ server_id: string; database_name: string }>(
      'select server_id, database_name from data_project_roles where database_name is not null',
    );
    const by = new Map<string, string[]>();
    for (const r of rows) by.set(r.server_id, [...(by.get(r.server_id) ?? []), r.database_name]);
    return by;
  };

  const viewOf = (s: FleetServer, databases: string[], health: ServerHealth): ServerView => {
    samples.set(s.id, {
      server: s.id,
      projects: databases.length,
      up: health.reachable,
      databaseBytes: health.databaseBytes,
    });
    return {
      id: s.id,
      state: s.state,
      weight: s.weight,
      builtIn: s.builtIn,
      ...redactUrl(s.url),
      projects: databases.length,
      health,
      createdAt: s.createdAt,
      updatedAt: s.updatedAt,
    };
  };

  const view = async (s: FleetServer, by?: Map<string, string[]>): Promise<ServerView> => {
    const databases = (by ?? (await databasesByServer())).get(s.id) ?? [];
    return viewOf(s, databases, await inspectServer(s.url, databases));
  };

  const list = async (): Promise<ServerView[]> => {
    await fleet.reload();
    const by = await databasesByServer();
    const all = fleet.list().sort((a, b) => (a.builtIn ? -1 : b.builtIn ? 1 : a.id.localeCompare(b.id)));
    const views = await Promise.all(all.map((s) => view(s, by)));
    for (const id of samples.keys()) if (!all.some((s) => s.id === id)) samples.delete(id);
    return views;
  };

  const audit =
    (by: OperatorActor, action: string, id: string, details: Record<string, unknown>) =>
    async (db: Pick<pg.PoolClient, 'query'>) =>
      await writeOperatorAudit(db, by, action, 'server', id, details);

  return {
    list,
    async get(id: string): Promise<ServerView> {
      return await view(await fleet.get(id));
    },
    /** Registers a server (400 naming `url` when it cannot be reached or its role may not create databases and roles). */
    async add(by: OperatorActor, input: { id: string; url: string; weight?: number | null; state?: string | null }) {
      const details = {
        url: redactUrl(input.url).url,
        weight: input.weight ?? 1,
        state: input.state ?? 'active',
      };
      const made = await fleet
        .add(
          { id: input.id, url: input.url, weight: input.weight ?? undefined, state: input.state ?? undefined },
          audit(by, 'server.add', input.id, details),
        )
        .catch(scrubbed(input.url));
      logger.info({ server: made.id, operator: by.operator }, 'data: an operator registered a project server');
      return await view(made);
    },
    /** Changes a server's state, weight or URL. */
    async update(
      by: OperatorActor,
      id: string,
      patch: { state?: string | null; weight?: number | null; url?: string | null },
    ) {
      const change = {
        state: patch.state ?? undefined,
        weight: patch.weight ?? undefined,
        url: patch.url ?? undefined,
      };
      const details: Record<string, unknown> = {};
      if (change.state !== undefined) details.state = change.state;
      if (change.weight !== undefined) details.weight = change.weight;
      if (change.url !== undefined) details.url = redactUrl(change.url).url;
      const changed = await fleet
        .update(id, change, audit(by, 'server.update', id, details))
        .catch(scrubbed(change.url));
      return await view(changed);
    },
    /** Removes a server holding no project (409 SERVER_IN_USE otherwise; the default server stays). */
    async remove(by: OperatorActor, id: string): Promise<boolean> {
      await fleet.remove(id, audit(by, 'server.remove', id, {}));
      samples.delete(id);
      return true;
    },
    /** The server a project lives on (null before its database was made). */
    async serverOf(projectId: string): Promise<string | null> {
      const { rows } = await admin.query<{ server_id: string }>(
        'select server_id from data_project_roles where project_id = $1 and database_name is not null',
        [projectId],
      );
      return rows[0]?.server_id ?? null;
    },
    /** Reads every server again for /metrics (projects, reachability, bytes); a failure keeps the last sample. */
    async sample(): Promise<void> {
      await list();
    },
    /** The last sample of each server. */
    samples: (): ServerSample[] => [...samples.values()],
  };
}
export type Servers = ReturnType<typeof createServers>;
