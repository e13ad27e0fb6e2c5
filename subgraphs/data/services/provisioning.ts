// Each project's PostgreSQL database and roles: created on `project.created` (or by the project's first data API
// call, whichever comes first: a project is usable the moment its creation answers) and removed on
// `project.deleted`. Both are idempotent (events arrive at least once) and serialised per project across processes
// by an advisory lock in the platform database, where no project's SQL ever runs; different projects are made side
// by side (a few at a time per process), each in five round trips besides its CREATE DATABASE.
//
// The wall between projects is structural (DESIGN §6): a project's tables live in a database of its own, cloned
// from a small template, which only the project's login role may connect to (PUBLIC's CONNECT and TEMP revoked).
// LISTEN/NOTIFY, advisory locks and the per-database catalogs (pg_class, pg_proc, pg_description, pg_policy, ...)
// then reach nothing of another project or of the platform. The roles are NOSUPERUSER NOCREATEDB NOCREATEROLE
// NOBYPASSRLS with a connection limit. The platform role needs CREATEDB and CREATEROLE (no superuser); it owns the
// databases and is granted the project's roles, so it can manage and drop what they own.
import crypto from 'node:crypto';
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../../../platform/crypto.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import {
  EXTENSIONS_SCHEMA,
  ident,
  installationDigest,
  literal,
  projectNamesOf,
  schemaNameOf,
  templateNameOf,
} from './names.ts';
import { createPgPool, inPgTransaction } from '../../../platform/pg-pool.ts';
import { DEFAULT_SERVER, singleServer, type ServerDirectory } from './fleet.ts';

/** `anonReady`: the anonymous role exists with its grants (false for a project made before it; see ensureAnonymous). */
export type ProjectRole = {
  projectId: string;
  /** The project server its database lives on (fleet.ts; `default` is the configured one). */
  serverId: string;
  databaseName: string;
  schemaName: string;
  roleName: string;
  userRoleName: string;
  anonRoleName: string;
  anonReady: boolean;
  password: string;
};

export type Provisioning = ReturnType<typeof createProvisioning>;

/**
 * Roles read for requests are kept (the sealed password decrypted once): a role changes only when its project
 * is deleted (`drop` forgets it here; a deleted project's credentials are refused before the data API runs,
 * and an instance that missed the drop can no longer log in as the dropped role). Bounded and aged anyway.
 */
const ROLE_CACHE_MAX = 10_000;
const ROLE_CACHE_TTL_MS = 10 * 60_000;

/** Held while a project is made or dropped (two keys: the project's own lock, not another's). */
const PROJECT_LOCK = `select pg_advisory_xact_lock(hashtext('tessera_data_provisioning'), hashtext($1))`;
/** Held while the installation's template is made on the default server (the key older versions hold too). */
const TEMPLATE_LOCK = `select pg_advisory_xact_lock(hashtext('tessera_data_template'))`;
/** Held while the template is made on another server of the fleet. */
const SERVER_TEMPLATE_LOCK = `select pg_advisory_xact_lock(hashtext('tessera_data_template'), hashtext($1))`;
/** Projects one process makes or drops at once (each holds a platform connection for its lock). */
const CONCURRENCY = 4;

/**
 * SCRAM iterations of a project role's stored password. The password is 24 random bytes (192 bits), so key
 * stretching adds nothing against a leaked verifier (nobody can search 2^192 secrets, stretched or not), while
 * every new project connection pays it: PostgreSQL's default 4096 PBKDF2 rounds cost ~1.5 ms of server CPU per
 * connection under `password` authentication (the embedded server's) and the same in this process under SCRAM.
 */
const SCRAM_ITERATIONS = 16;

/** The SCRAM-SHA-256 verifier PostgreSQL stores for `password` (RFC 5802/7677), made here so its iterations are ours. */
export function scramVerifier(password: string, iterations = SCRAM_ITERATIONS): string {
  const salt = crypto.randomBytes(16);
  const salted = crypto.pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = crypto.createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = crypto.createHash('sha256').update(clientKey).digest();
  const serverKey = crypto.createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** The trigger function that streams a row change of a published table (see realtime.ts). */
const NOTIFY_FUNCTION = `create or replace function tessera_realtime.notify_change() returns trigger
language plpgsql as $fn$
declare
  payload jsonb;
  body text;
begin
  payload := jsonb_build_object('table', TG_TABLE_NAME, 'op', lower(TG_OP), 'at', now());
  if TG_OP <> 'DELETE' then payload := payload || jsonb_build_object('row', to_jsonb(NEW)); end if;
  if TG_OP <> 'INSERT' then payload := payload || jsonb_build_object('old', to_jsonb(OLD)); end if;
  body := payload::text;
  -- NOTIFY payloads stop at 8000 bytes: a larger change is announced without its rows.
  if octet_length(body) > 7900 then
    body := ((payload - 'row' - 'old') || jsonb_build_object('truncated', true))::text;
  end if;
  perform pg_notify('tessera_realtime', body);
  return null;
end
$fn$`;

/** Raises (SQLSTATE 54T01, answered 413) when a write would answer more rows than the platform allows (see builder.ts). */
const CHECK_ROWS_FUNCTION = `create or replace function tessera_limits.check_rows(n bigint, cap bigint) returns boolean
language plpgsql as $fn$
begin
  if n > cap then
    raise exception 'the statement would answer % rows; at most % (TESSERA_DATA_MAX_ROWS): narrow the where or send "returning": false', n, cap
      using errcode = '54T01';
  end if;
  return true;
end
$fn$`;

/**
 * What every project database starts with, made once per installation in its template (`tst_<digest>_v<n>`):
 * the schema of extensions (pgvector when it can be created, or when the server's template1 has it), the realtime
 * trigger function, the after-hook outbox (written by the project's own connections in their write's transaction,
 * see hook-outbox.ts) and the row-limit check. All owned by the platform role: a project may use them, not change
 * them. `public` is closed (the project's tables live in its own schema `p_<id>`).
 */
export const TEMPLATE_SQL = [
  'revoke all on schema public from public',
  `create schema if not exists ${EXTENSIONS_SCHEMA}`,
  'create schema tessera_realtime',
  'grant usage on schema tessera_realtime to public',
  NOTIFY_FUNCTION,
  'create schema tessera_hooks',
  'grant usage on schema tessera_hooks to public',
  `create table tessera_hooks.outbox (
    id bigserial primary key,
    payload jsonb not null,
    created_at timestamptz not null default now(),
    attempts int not null default 0,
    next_attempt_at timestamptz not null default now(),
    last_error text
  )`,
  'grant select, insert, update, delete on tessera_hooks.outbox to public',
  'grant usage, select on sequence tessera_hooks.outbox_id_seq to public',
  'create schema tessera_limits',
  'grant usage on schema tessera_limits to public',
  CHECK_ROWS_FUNCTION,
];

/** Creates the provisioning service: `admin` reaches the platform database, `serverUrl` the projects' server. */
export function createProvisioning(opts: {
  admin: pg.Pool;
  /** The platform database (its advisory locks and `data_project_roles`). */
  platformUrl: string;
  /** The default server (and maintenance database) where project databases are created: TESSERA_PROJECTS_DATABASE_URL or the platform's. */
  serverUrl: string;
  /** The fleet of project servers (fleet.ts): where a project goes, and each server's URL. Default: `serverUrl` alone. */
  servers?: ServerDirectory;
  box: SecretBox;
  secret: string;
  statementTimeoutMs: number;
  connectionLimit: number;
  tempFileLimitKb: number;
  logger: Logger;
}) {
  const { admin, box, logger } = opts;
  const directory = opts.servers ?? singleServer(opts.serverUrl);
  /**
   * Per project server: a pool for statements that cannot run in a transaction (CREATE/DROP DATABASE) and the roles'
   * DDL, as the platform role; whether that role is a superuser there; its template, once made. Made on first use.
   */
  type ServerState = { id: string; url: string; pool: pg.Pool; superuser: Promise<boolean>; template?: Promise<void> };
  const serverStates = new Map<string, ServerState>();
  const serverOf = async (id: string): Promise<ServerState> => {
    const known = serverStates.get(id);
    if (known) return known;
    const { url } = await directory.get(id);
    const again = serverStates.get(id);
    if (again) return again;
    const pool = createPgPool(
      { connectionString: url, max: CONCURRENCY, application_name: 'tessera-data-provisioning' },
      logger,
      `data provisioning (${id})`,
    );
    const superuser = pool
      .query<{ su: boolean }>('select rolsuper as su from pg_roles where rolname = current_user')
      .then((r) => r.rows[0]?.su === true);
    superuser.catch(() => {
      if (serverStates.get(id)?.pool === pool) serverStates.delete(id);
    });
    const state: ServerState = { id, url, pool, superuser };
    serverStates.set(id, state);
    return state;
  };
  /** The default server's pool (made at once: `server` is part of the service's interface). */
  const defaultServer = (): ServerState => {
    const known = serverStates.get(DEFAULT_SERVER);
    if (known) return known;
    const pool = createPgPool(
      { connectionString: opts.serverUrl, max: CONCURRENCY, application_name: 'tessera-data-provisioning' },
      logger,
      'data provisioning',
    );
    const superuser = pool
      .query<{ su: boolean }>('select rolsuper as su from pg_roles where rolname = current_user')
      .then((r) => r.rows[0]?.su === true);
    superuser.catch(() => {});
    const state: ServerState = { id: DEFAULT_SERVER, url: opts.serverUrl, pool, superuser };
    serverStates.set(DEFAULT_SERVER, state);
    return state;
  };
  const server = defaultServer().pool;
  // The advisory locks and the rows of data_project_roles, on the platform database (its own pool: a provisioning
  // holds its connection a while, which must not starve the request paths' `admin` pool).
  const locks = createPgPool(
    { connectionString: opts.platformUrl, max: CONCURRENCY, application_name: 'tessera-data-provisioning' },
    logger,
    'data provisioning locks',
  );
  let platformDatabase = '';
  let template = '';

  const roles = new LRUCache<string, ProjectRole>({ max: ROLE_CACHE_MAX, ttl: ROLE_CACHE_TTL_MS });
  // Bumped by every drop: a read that overlapped one is not cached (it may have seen the role just before it went).
  let drops = 0;
  // A project being made or dropped here: a second call for it shares the first one's work.
  const inFlight = new Map<string, Promise<unknown>>();
  const once = <T>(key: string, fn: () => Promise<T>): Promise<T> => {
    const running = inFlight.get(key) as Promise<T> | undefined;
    if (running) return running;
    const p = fn().finally(() => {
      if (inFlight.get(key) === p) inFlight.delete(key);
    });
    inFlight.set(key, p);
    return p;
  };

  /** Runs `fn` in a platform transaction holding `lock` (a statement taking `params`). */
  const locked = async <T>(lock: string, params: unknown[], fn: (c: pg.PoolClient) => Promise<T>): Promise<T> =>
    await inPgTransaction(locks, async (c) => {
      await c.query(lock, params);
      return await fn(c);
    });

  /** Runs `fn` on a fresh connection to database `name` of server `srv`, as the platform role. */
  const inDatabase = async <T>(srv: ServerState, name: string, fn: (c: pg.Client) => Promise<T>): Promise<T> => {
    const url = new URL(srv.url);
    url.pathname = `/${encodeURIComponent(name)}`;
    const c = new pg.Client({ connectionString: url.toString(), application_name: 'tessera-data-provisioning' });
    c.on('error', () => {});
    await c.connect();
    try {
      // Nothing a project may have created can stand in for what the statements below name.
      await c.query('set search_path = pg_catalog');
      return await fn(c);
    } finally {
      await c.end().catch(() => {});
    }
  };

  const databaseExists = async (srv: ServerState, name: string): Promise<boolean> =>
    (await srv.pool.query('select 1 from pg_database where datname = $1', [name])).rowCount! > 0;
  const roleExists = async (srv: ServerState, name: string): Promise<boolean> =>
    (await srv.pool.query('select 1 from pg_roles where rolname = $1', [name])).rowCount! > 0;

  /**
   * The session settings of a login role in its database: search path and the statement and idle-in-transaction
   * timeouts (and, where the platform role is a superuser, the temporary-file limit, a superuser-only setting). They
   * live on the role so a new connection sends nothing but its credentials. They are defaults, not walls: the pool
   * cancels statements past the timeout itself and resets sessions that ran rawSQL (see pools.ts).
   */
  const sessionDefaults = (schemaName: string, superuser: boolean): [string, string][] => [
    ['search_path', `${ident(schemaName)}, ${EXTENSIONS_SCHEMA}`],
    ['statement_timeout', String(Number(opts.statementTimeoutMs))],
    ['idle_in_transaction_session_timeout', String(Number(opts.statementTimeoutMs) * 2)],
    ...(superuser ? ([['temp_file_limit', `${Number(opts.tempFileLimitKb)}`]] as [string, string][]) : []),
  ];
  const setSessionDefaults = async (
    srv: ServerState,
    r: {
      roleName: string;
      databaseName: string;
      schemaName: string;
    },
  ): Promise<void> => {
    for (const [name, value] of sessionDefaults(r.schemaName, await srv.superuser)) {
      await srv.pool.query(
        `alter role ${ident(r.roleName)} in database ${ident(r.databaseName)} set ${name} = ${value}`,
      );
    }
    await srv.pool.query(`alter role ${ident(r.roleName)} connection limit ${Number(opts.connectionLimit)}`);
  };

  /** Roles whose settings differ from this configuration (an older version, or the timeouts changed) are updated, per server. */
  const syncSessionDefaults = async (): Promise<void> => {
    const { rows: all } = await admin.query<{
      project_id: string;
      role_name: string;
      schema_name: string;
      database_name: string;
      server_id: string;
    }>(
      'select project_id, role_name, schema_name, database_name, server_id from data_project_roles where database_name is not null',
    );
    for (const id of new Set(all.map((r) => r.server_id))) {
      const srv = await serverOf(id).catch((err: Error) => {
        logger.warn({ err: err.message, server: id }, 'data: project server unknown; its roles keep their settings');
        return undefined;
      });
      if (srv)
        await syncServer(
          srv,
          all.filter((r) => r.server_id === id),
        ).catch((err: Error) =>
          logger.warn({ err: err.message, server: id }, 'data: could not read the project roles of a server'),
        );
    }
  };
  const syncServer = async (
    srv: ServerState,
    rows: { project_id: string; role_name: string; schema_name: string; database_name: string }[],
  ): Promise<void> => {
    const superuser = await srv.superuser;
    const prefix = `tsr_${installationDigest(platformDatabase)}_`;
    const { rows: have } = await srv.pool.query<{ rolname: string; rolconnlimit: number; setconfig: string[] | null }>(
      `select r.rolname, r.rolconnlimit, s.setconfig from pg_roles r
         left join pg_db_role_setting s on s.setrole = r.oid and s.setdatabase <> 0
        where starts_with(r.rolname, $1)`,
      [prefix],
    );
    const byRole = new Map(have.map((h) => [h.rolname, h]));
    let updated = 0;
    for (const r of rows) {
      const h = byRole.get(r.role_name);
      if (!h) continue;
      const set = new Set((h.setconfig ?? []).map((x) => x.replace(/"/g, '')));
      const want = sessionDefaults(r.schema_name, superuser).map(
        ([name, value]) => `${name}=${value.replace(/"/g, '')}`,
      );
      if (h.rolconnlimit === opts.connectionLimit && want.every((w) => set.has(w))) continue;
      await setSessionDefaults(srv, {
        roleName: r.role_name,
        databaseName: r.database_name,
        schemaName: r.schema_name,
      }).catch((err: Error) =>
        logger.warn({ err: err.message, role: r.role_name }, 'data: could not update a project role'),
      );
      updated++;
    }
    if (updated > 0) logger.info({ roles: updated }, 'data: project roles given the current session settings');
  };

  /** Makes the installation's template on `srv` once per process (retried after a failure). */
  const ensureTemplate = (srv: ServerState): Promise<void> => {
    srv.template ??= makeTemplate(srv).catch((err: unknown) => {
      srv.template = undefined;
      throw err;
    });
    return srv.template;
  };
  /** Makes the installation's template (under a temporary name, renamed once complete, so a crash leaves none half made). */
  const makeTemplate = async (srv: ServerState): Promise<void> => {
    const [lock, params] = srv.id === DEFAULT_SERVER ? [TEMPLATE_LOCK, []] : [SERVER_TEMPLATE_LOCK, [srv.id]];
    const server = srv.pool;
    await locked(lock, params, async () => {
      if (await databaseExists(srv, template)) return;
      const building = `${template}_new`;
      await server.query(`drop database if exists ${ident(building)}`);
      await server.query(`create database ${ident(building)} template template1`);
      await inDatabase(srv, building, async (c) => {
        for (const sql of TEMPLATE_SQL) await c.query(sql);
        const granted = await c
          .query(`grant usage on schema ${EXTENSIONS_SCHEMA} to public`)
          .then(() => true)
          .catch(
            (err: Error) => (
              logger.warn(
                { err: err.message },
                `data: could not open schema ${EXTENSIONS_SCHEMA} of template1 to projects`,
              ),
              false
            ),
          );
        if (granted) await enablePgvector(c);
      });
      await server.query(`revoke connect, temporary on database ${ident(building)} from public`);
      await server.query(`alter database ${ident(building)} rename to ${ident(template)}`);
      logger.info({ template, server: srv.id }, 'data: project database template ready');
    });
  };

  /** Creates pgvector in the template's extensions schema when the server ships it (best effort: the exact scan works without). */
  const enablePgvector = async (c: pg.Client): Promise<void> => {
    const available = await c.query(`select 1 from pg_available_extensions where name = 'vector'`);
    if (available.rowCount === 0) return;
    const { rows } = await c.query<{ schema: string }>(
      `select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'vector'`,
    );
    if (!rows[0]) {
      await c
        .query(`create extension if not exists vector schema ${EXTENSIONS_SCHEMA}`)
        .catch((err: Error) =>
          logger.warn(
            { err: err.message },
            `data: pgvector is available but could not be created (it needs a superuser: create it in template1's schema ${EXTENSIONS_SCHEMA}); vectorSearch uses exact scans`,
          ),
        );
    } else if (rows[0].schema !== EXTENSIONS_SCHEMA) {
      logger.warn(
        { schema: rows[0].schema },
        `data: pgvector is installed in template1's schema "${rows[0].schema}", which projects cannot reach; run there: alter extension vector set schema ${EXTENSIONS_SCHEMA}`,
      );
    }
  };

  type Row = {
    database_name: string | null;
    schema_name: string;
    role_name: string;
    user_role_name: string;
    anon_role_name: string | null;
    password_sealed: string;
    server_id: string;
  };
  const ROW_COLUMNS =
    'database_name, schema_name, role_name, user_role_name, anon_role_name, password_sealed, server_id';
  const roleOf = (projectId: string, r: Row): ProjectRole => ({
    projectId,
    serverId: r.server_id,
    databaseName: r.database_name!,
    schemaName: r.schema_name,
    roleName: r.role_name,
    userRoleName: r.user_role_name,
    anonRoleName: r.anon_role_name ?? `${r.role_name}_a`,
    anonReady: r.anon_role_name !== null,
    password: box.decrypt(r.password_sealed),
  });

  const read = async (projectId: string): Promise<ProjectRole | undefined> => {
    const { rows } = await admin.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
      projectId,
    ]);
    return rows[0]?.database_name ? roleOf(projectId, rows[0]) : undefined;
  };

  /** The project's role (cached); undefined while it is not provisioned (not cached: it is being created). */
  const load = async (projectId: string): Promise<ProjectRole | undefined> => {
    const hit = roles.get(projectId);
    if (hit) return hit;
    const before = drops;
    const role = await read(projectId);
    if (role && before === drops) roles.set(projectId, role);
    return role;
  };

  const ROLE_ATTRS = 'nosuperuser nocreatedb nocreaterole noreplication nobypassrls';

  /** Makes (or, after a crash, completes) the roles: one batch when none exists, step by step otherwise. */
  const makeRoles = async (
    srv: ServerState,
    roleName: string,
    userRoleName: string,
    anonRoleName: string,
    verifier: string,
  ): Promise<void> => {
    const attrs = ROLE_ATTRS;
    const limit = `connection limit ${Number(opts.connectionLimit)}`;
    // The platform role manages what the project owns; the login role may switch to the end-user and anonymous roles.
    const grants = [
      `grant ${ident(roleName)}, ${ident(userRoleName)}, ${ident(anonRoleName)} to current_user`,
      `grant ${ident(userRoleName)}, ${ident(anonRoleName)} to ${ident(roleName)}`,
    ];
    const nologin = (name: string) => `create role ${ident(name)} with nologin ${attrs}`;
    const server = srv.pool;
    try {
      await server.query(
        [
          `create role ${ident(roleName)} with login noinherit ${attrs} ${limit} password ${verifier}`,
          nologin(userRoleName),
          nologin(anonRoleName),
          ...grants,
        ].join('; '),
      );
      return;
    } catch (err) {
      if ((err as { code?: string }).code !== '42710') throw err; // duplicate_object: left by a crash, go step by step
    }
    if (await roleExists(srv, roleName))
      await server.query(`alter role ${ident(roleName)} with login noinherit ${attrs} ${limit} password ${verifier}`);
    else
      await server.query(`create role ${ident(roleName)} with login noinherit ${attrs} ${limit} password ${verifier}`);
    for (const r of [userRoleName, anonRoleName]) if (!(await roleExists(srv, r))) await server.query(nologin(r));
    for (const g of grants) await server.query(g);
  };

  /** What the end-user and anonymous roles may do in the project's schema; row level security decides which rows. */
  const schemaGrants = (roleName: string, schemaName: string, to: string): string[] => [
    `grant usage on schema ${ident(schemaName)} to ${ident(to)}`,
    `alter default privileges for role ${ident(roleName)} in schema ${ident(schemaName)} grant select, insert, update, delete on tables to ${ident(to)}`,
    `alter default privileges for role ${ident(roleName)} in schema ${ident(schemaName)} grant usage, select on sequences to ${ident(to)}`,
  ];

  /**
   * On `srv`: the project's roles (the same names and password on every server), its database from the server's
   * template, CONNECT for its login role only, the session defaults. Idempotent (a crash midway is completed).
   */
  const makeDatabase = async (srv: ServerState, names: ReturnType<typeof projectNamesOf>, password: string) => {
    const { roleName, userRoleName, anonRoleName, databaseName, schemaName } = names;
    await ensureTemplate(srv);
    await makeRoles(srv, roleName, userRoleName, anonRoleName, literal(scramVerifier(password)));
    await srv.pool
      .query(`create database ${ident(databaseName)} template ${ident(template)}`)
      .catch((err: { code?: string }) => {
        if (err.code !== '42P04') throw err; // duplicate_database: left by a crash
      });
    await srv.pool.query(
      [
        `revoke connect, temporary on database ${ident(databaseName)} from public`,
        `grant connect on database ${ident(databaseName)} to ${ident(roleName)}`,
        ...sessionDefaults(schemaName, await srv.superuser).map(
          ([name, value]) => `alter role ${ident(roleName)} in database ${ident(databaseName)} set ${name} = ${value}`,
        ),
      ].join('; '),
    );
  };

  /** Creates the project's roles, database and schema (idempotent); refuses a deleted project. */
  const create = (projectId: string): Promise<ProjectRole> =>
    once(`create:${projectId}`, () =>
      locked(PROJECT_LOCK, [projectId], async (c) => {
        if ((await c.query('select 1 from data_deleted_projects where project_id = $1', [projectId])).rowCount! > 0) {
          throw new AppError('NOT_FOUND', 'The project was deleted', { resource: 'project', id: projectId });
        }
        const { rows } = await c.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
          projectId,
        ]);
        if (rows[0]?.database_name) return roleOf(projectId, rows[0]); // made before (an event delivered again)
        // Placed once: a row left by a crash (or a 0.1 project) keeps its server.
        const serverId = rows[0]?.server_id ?? (await directory.place(c));
        const srv = await serverOf(serverId);
        const names = projectNamesOf(opts.secret, platformDatabase, projectId);
        const { roleName, userRoleName, anonRoleName, databaseName, schemaName } = names;
        const password = crypto.randomBytes(24).toString('base64url');
        await makeDatabase(srv, names, password);
        await inDatabase(srv, databaseName, async (d) => {
          await d.query(
            [
              `create schema if not exists ${ident(schemaName)} authorization ${ident(roleName)}`,
              // Tables the project creates are open to its end-user and anonymous roles; row level security decides which rows.
              ...schemaGrants(roleName, schemaName, userRoleName),
              ...schemaGrants(roleName, schemaName, anonRoleName),
            ].join('; '),
          );
        });
        await c.query(
          `insert into data_project_roles (project_id, schema_name, role_name, user_role_name, anon_role_name, password_sealed, database_name, server_id) values ($1, $2, $3, $4, $5, $6, $7, $8)
           on conflict (project_id) do update set schema_name = excluded.schema_name, role_name = excluded.role_name, user_role_name = excluded.user_role_name,
             anon_role_name = excluded.anon_role_name, password_sealed = excluded.password_sealed, database_name = excluded.database_name, server_id = excluded.server_id`,
          [projectId, schemaName, roleName, userRoleName, anonRoleName, box.encrypt(password), databaseName, serverId],
        );
        logger.info({ project: projectId, server: serverId }, 'data: project database ready');
        return { projectId, serverId, ...names, anonReady: true, password };
      }),
    );

  /**
   * Gives a project made before the anonymous role existed its role (idempotent, under the project's lock): created,
   * granted like the end-user role, with the privileges on the tables the project already has (the end-user role got
   * them through the default privileges, which only cover tables made later). Run on the project's first anonymous call.
   */
  const ensureAnonymous = (role: ProjectRole): Promise<ProjectRole> =>
    role.anonReady
      ? Promise.resolve(role)
      : once(`anon:${role.projectId}`, () =>
          locked(PROJECT_LOCK, [role.projectId], async (c) => {
            const { rows } = await c.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
              role.projectId,
            ]);
            if (!rows[0]?.database_name)
              throw new AppError('NOT_FOUND', 'The project was deleted', { resource: 'project', id: role.projectId });
            if (rows[0].anon_role_name === null) {
              const srv = await serverOf(rows[0].server_id);
              const { roleName, anonRoleName, schemaName, databaseName } = role;
              if (!(await roleExists(srv, anonRoleName)))
                await srv.pool.query(`create role ${ident(anonRoleName)} with nologin ${ROLE_ATTRS}`);
              await srv.pool.query(
                `grant ${ident(anonRoleName)} to current_user; grant ${ident(anonRoleName)} to ${ident(roleName)}`,
              );
              await inDatabase(srv, databaseName, async (d) => {
                await d.query(
                  [
                    ...schemaGrants(roleName, schemaName, anonRoleName),
                    // As the owner of the tables (the platform role is a member of the project's login role).
                    `set role ${ident(roleName)}`,
                    `grant select, insert, update, delete on all tables in schema ${ident(schemaName)} to ${ident(anonRoleName)}`,
                    `grant usage, select on all sequences in schema ${ident(schemaName)} to ${ident(anonRoleName)}`,
                    'reset role',
                  ].join('; '),
                );
              });
              await c.query('update data_project_roles set anon_role_name = $2 where project_id = $1', [
                role.projectId,
                anonRoleName,
              ]);
              logger.info({ project: role.projectId }, 'data: anonymous role of an older project made');
            }
            const ready = { ...role, serverId: rows[0].server_id, anonReady: true };
            roles.set(role.projectId, ready);
            return ready;
          }),
        );

  /** Drops a project's roles on `srv` as far as they exist (after their database is gone, nothing else depends on them). */
  const dropRoles = async (srv: ServerState, names: string[]): Promise<void> => {
    for (const role of names) if (await roleExists(srv, role)) await srv.pool.query(`drop role ${ident(role)}`);
  };

  /** Drops the project's database and roles on `srv` (named by its row `r`, or derived for a project without one). */
  const dropDatabase = async (srv: ServerState, projectId: string, r: Row | undefined): Promise<void> => {
    const names = r?.database_name
      ? {
          databaseName: r.database_name,
          roleName: r.role_name,
          userRoleName: r.user_role_name,
          anonRoleName: r.anon_role_name ?? `${r.role_name}_a`,
        }
      : projectNamesOf(opts.secret, platformDatabase, projectId);
    await srv.pool.query(`drop database if exists ${ident(names.databaseName)} with (force)`);
    await dropRoles(srv, [names.roleName, names.userRoleName, names.anonRoleName]);
  };

  /** Forgets the project's cached role (it was dropped, or moved to another server). */
  const forget = (projectId: string): void => {
    drops++;
    roles.delete(projectId);
  };

  return {
    /** The platform database's name. */
    platformDatabase: () => platformDatabase,

    /** Once per start: the template, hardening of the platform database, roles brought to the current settings. */
    async init(): Promise<void> {
      const { rows } = await admin.query<{ db: string }>('select current_database() as db');
      platformDatabase = rows[0]!.db;
      template = templateNameOf(platformDatabase);
      const srv = defaultServer();
      if (!(await srv.superuser))
        logger.info(
          'data: the platform role is not a superuser: temp_file_limit of project roles is left to the server configuration',
        );
      await ensureTemplate(srv);
      // No project role ever connects to the platform database (nor may anyone else through PUBLIC). Best effort: a
      // platform role that does not own the database cannot revoke.
      await admin
        .query(`revoke connect, temporary on database ${ident(platformDatabase)} from public`)
        .catch((err: Error) =>
          logger.warn({ err: err.message }, 'data: could not revoke PUBLIC access to the platform database'),
        );
      const legacy = await admin.query('select 1 from data_project_roles where database_name is null limit 1');
      if (legacy.rowCount)
        logger.warn(
          'data: projects made before 0.2 kept their tables in schemas of the platform database; they get a new, empty database of their own (README: Upgrading)',
        );
      await syncSessionDefaults();
    },

    load,
    create,
    ensureAnonymous,
    forget,
    /** Forgets every cached role (a `data.project.moved` may have been missed): each is read again on next use. */
    forgetAll(): void {
      drops++;
      roles.clear();
    },

    /** The project's role, provisioning it now if it is not yet (a project is usable as soon as it exists). */
    async ensure(projectId: string): Promise<ProjectRole> {
      return (await load(projectId)) ?? (await create(projectId));
    },

    /** Drops the project's database and roles (idempotent); from now on the project cannot be provisioned again. */
    drop(projectId: string): Promise<void> {
      forget(projectId);
      return once(`drop:${projectId}`, () =>
        locked(PROJECT_LOCK, [projectId], async (c) => {
          await c.query('insert into data_deleted_projects (project_id) values ($1) on conflict do nothing', [
            projectId,
          ]);
          const { rows } = await c.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
            projectId,
          ]);
          const r = rows[0];
          const srv = await serverOf(r?.server_id ?? DEFAULT_SERVER);
          await dropDatabase(srv, projectId, r);
          if (r && !r.database_name) {
            // A 0.1 project: its schema and roles were in the platform database.
            await c.query(`drop schema if exists ${ident(schemaNameOf(projectId))} cascade`);
            for (const role of [r.role_name, r.user_role_name]) {
              if (!(await roleExists(srv, role))) continue;
              await c.query(`drop owned by ${ident(role)} cascade`);
              await c.query(`drop role ${ident(role)}`);
            }
          }
          await c.query('delete from data_project_roles where project_id = $1', [projectId]);
          await c.query('delete from data_realtime_tables where project_id = $1', [projectId]);
          await c.query('delete from data_hook_outbox_projects where project_id = $1', [projectId]);
        }),
      ).finally(() => forget(projectId));
    },

    /**
     * Moves (move.ts): makes the project's roles and an EMPTY database (no project schema: the copy brings it, with
     * its owner and grants) on server `serverId`, dropping a copy a failed move left there first. Refuses the server
     * the project lives on. Returns the project's role as it will be on that server.
     */
    async prepareCopy(projectId: string, serverId: string): Promise<ProjectRole> {
      return await locked(PROJECT_LOCK, [projectId], async (c) => {
        const { rows } = await c.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
          projectId,
        ]);
        const r = rows[0];
        if (!r?.database_name) throw errors.notFound('project', projectId);
        if (r.server_id === serverId)
          throw errors.conflict(`The project lives on ${serverId} already`, {
            project_id: projectId,
            server: serverId,
          });
        const role = roleOf(projectId, r);
        const srv = await serverOf(serverId);
        await srv.pool.query(`drop database if exists ${ident(role.databaseName)} with (force)`);
        await makeDatabase(
          srv,
          {
            roleName: role.roleName,
            userRoleName: role.userRoleName,
            anonRoleName: role.anonRoleName,
            databaseName: role.databaseName,
            schemaName: role.schemaName,
          },
          role.password,
        );
        return { ...role, serverId };
      });
    },

    /**
     * Moves: the one row saying where the project lives now names `serverId` (in `c`, the move's platform
     * transaction, which also announces `data.project.moved`). Refuses a project deleted meanwhile.
     */
    async switchServer(c: Pick<pg.PoolClient, 'query'>, projectId: string, serverId: string): Promise<void> {
      const { rowCount } = await c.query(
        'update data_project_roles set server_id = $2 where project_id = $1 and database_name is not null',
        [projectId, serverId],
      );
      if (rowCount === 0) throw errors.notFound('project', projectId);
    },

    /**
     * Moves: drops the project's database and roles on `serverId`, which must NOT be where the project lives (the
     * source after a confirmed switch, or a failed move's copy on the target). Checked under the project's lock.
     */
    async dropCopy(projectId: string, serverId: string): Promise<void> {
      await locked(PROJECT_LOCK, [projectId], async (c) => {
        const { rows } = await c.query<Row>(`select ${ROW_COLUMNS} from data_project_roles where project_id = $1`, [
          projectId,
        ]);
        const r = rows[0];
        if (r?.server_id === serverId)
          throw errors.conflict(`The project lives on ${serverId}: its database there is not a copy`, {
            project_id: projectId,
            server: serverId,
          });
        await dropDatabase(await serverOf(serverId), projectId, r);
      });
    },

    /** A server's URL changed or it was removed: its provisioning connections close (made again on next use). */
    async forgetServer(serverId: string): Promise<void> {
      const srv = serverStates.get(serverId);
      if (!srv || serverId === DEFAULT_SERVER) return;
      serverStates.delete(serverId);
      await srv.pool.end().catch(() => {});
    },

    /** The default projects' server, as the platform role (its settings, e.g. max_connections). */
    server: server as Pick<pg.Pool, 'query'>,
    /** Any project server of the fleet, as the platform role. */
    async serverPool(serverId: string): Promise<Pick<pg.Pool, 'query'>> {
      return (await serverOf(serverId)).pool;
    },

    /** Cancels the statement running on a project's backend (the platform role is a member of every project role). */
    async cancelBackend(pid: number, serverId = DEFAULT_SERVER): Promise<void> {
      await (await serverOf(serverId)).pool.query('select pg_cancel_backend($1)', [pid]);
    },

    async stop(): Promise<void> {
      await Promise.allSettled([...inFlight.values()]);
      await Promise.allSettled([...serverStates.values()].map((s) => s.pool.end()));
      serverStates.clear();
      await locks.end();
    },
  };
}
