// Each project's schema and roles, created on `project.created` and removed on `project.deleted`
// (both idempotent: events arrive at least once). Works without superuser: the platform role needs
// CREATEROLE, and is granted the project's roles so it may manage (and drop) what they own.
import crypto from 'node:crypto';
import type pg from 'pg';
import { LRUCache } from 'lru-cache';
import type { SecretBox } from '../../../platform/crypto.ts';
import type { Logger } from '../../../platform/logger.ts';
import { EXTENSIONS_SCHEMA, ident, literal, roleNameOf, schemaNameOf, userRoleNameOf } from './names.ts';

export type ProjectRole = { projectId: string; schemaName: string; roleName: string; userRoleName: string; password: string };

export type Provisioning = ReturnType<typeof createProvisioning>;

/**
 * Roles read for requests are kept (the sealed password decrypted once): a role changes only when its project
 * is deleted (`drop` forgets it here; a deleted project's credentials are refused before the data API runs,
 * and an instance that missed the drop can no longer log in as the dropped role). Bounded and aged anyway.
 */
const ROLE_CACHE_MAX = 10_000;
const ROLE_CACHE_TTL_MS = 10 * 60_000;

const LOCK = `select pg_advisory_xact_lock(hashtext('tessera_data_provisioning'))`;

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
  payload := jsonb_build_object('schema', TG_TABLE_SCHEMA, 'table', TG_TABLE_NAME, 'op', lower(TG_OP), 'at', now());
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

async function tx<T>(admin: pg.Pool, fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
  const c = await admin.connect();
  try {
    await c.query('begin');
    await c.query(LOCK);
    const out = await fn(c);
    await c.query('commit');
    return out;
  } catch (err) {
    await c.query('rollback').catch(() => {});
    throw err;
  } finally {
    c.release();
  }
}

/** Creates the provisioning service over the platform role's pool. */
export function createProvisioning(opts: { admin: pg.Pool; box: SecretBox; statementTimeoutMs: number; logger: Logger }) {
  const { admin, box, logger } = opts;
  let database = '';

  const roles = new LRUCache<string, ProjectRole>({ max: ROLE_CACHE_MAX, ttl: ROLE_CACHE_TTL_MS });
  // Bumped by every drop: a read that overlapped one is not cached (it may have seen the role just before it went).
  let drops = 0;

  const read = async (projectId: string): Promise<ProjectRole | undefined> => {
    const { rows } = await admin.query<{ schema_name: string; role_name: string; user_role_name: string; password_sealed: string }>(
      'select schema_name, role_name, user_role_name, password_sealed from data_project_roles where project_id = $1',
      [projectId],
    );
    const r = rows[0];
    if (!r) return undefined;
    return { projectId, schemaName: r.schema_name, roleName: r.role_name, userRoleName: r.user_role_name, password: box.decrypt(r.password_sealed) };
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

  /** Creates pgvector in the extensions schema when the server ships it (best effort: the exact scan works without). */
  const enablePgvector = async (): Promise<void> => {
    const available = await admin.query(`select 1 from pg_available_extensions where name = 'vector'`);
    if (available.rowCount === 0) return;
    const { rows } = await admin.query<{ schema: string }>(`select n.nspname as schema from pg_extension e join pg_namespace n on n.oid = e.extnamespace where e.extname = 'vector'`);
    if (!rows[0]) {
      await admin.query(`create extension if not exists vector schema ${EXTENSIONS_SCHEMA}`).catch((err: Error) => logger.warn({ err: err.message }, 'data: pgvector is available but could not be created; vectorSearch uses exact scans'));
    } else if (rows[0].schema !== EXTENSIONS_SCHEMA) {
      logger.warn({ schema: rows[0].schema }, `data: pgvector is installed in schema "${rows[0].schema}", which projects cannot reach; run: alter extension vector set schema ${EXTENSIONS_SCHEMA}`);
    }
  };

  /**
   * The session settings of the login role in this database: its search path and the statement and idle-in-transaction
   * timeouts. They live on the role (not in each connection's start-up packet) so a new connection parses nothing extra.
   */
  const sessionDefaults = (schemaName: string): [string, string][] => [
    ['search_path', `${ident(schemaName)}, ${EXTENSIONS_SCHEMA}`],
    ['statement_timeout', String(Number(opts.statementTimeoutMs))],
    ['idle_in_transaction_session_timeout', String(Number(opts.statementTimeoutMs) * 2)],
  ];
  const setSessionDefaults = async (c: pg.PoolClient | pg.Pool, roleName: string, schemaName: string): Promise<void> => {
    for (const [name, value] of sessionDefaults(schemaName)) await c.query(`alter role ${ident(roleName)} in database ${ident(database)} set ${name} = ${value}`);
  };

  /** Roles whose settings differ from this configuration (made by an older version, or the timeout changed) are updated. */
  const syncSessionDefaults = async (): Promise<void> => {
    const { rows } = await admin.query<{ role_name: string; schema_name: string; setconfig: string[] | null }>(
      `select p.role_name, p.schema_name, s.setconfig from data_project_roles p
         join pg_roles r on r.rolname = p.role_name
         left join pg_db_role_setting s on s.setrole = r.oid and s.setdatabase = (select oid from pg_database where datname = current_database())`,
    );
    let updated = 0;
    for (const r of rows) {
      const have = new Set(r.setconfig ?? []);
      const want = sessionDefaults(r.schema_name).filter(([name]) => name !== 'search_path').map(([name, value]) => `${name}=${value}`);
      const searchPath = (r.setconfig ?? []).find((x) => x.startsWith('search_path='))?.replace(/"/g, '');
      if (want.every((w) => have.has(w)) && searchPath === `search_path=${r.schema_name}, ${EXTENSIONS_SCHEMA}`) continue;
      await setSessionDefaults(admin, r.role_name, r.schema_name).catch((err: Error) => logger.warn({ err: err.message, role: r.role_name }, 'data: could not update a project role'));
      updated++;
    }
    if (updated > 0) logger.info({ roles: updated }, 'data: project roles given the current session settings');
  };

  return {
    /** The current database's name (role names depend on it). */
    database: () => database,

    /** Once per start: database-wide hardening and the realtime trigger function. */
    async init(): Promise<void> {
      const { rows } = await admin.query<{ db: string }>('select current_database() as db');
      database = rows[0]!.db;
      await tx(admin, async (c) => {
        await c.query('create schema if not exists tessera_realtime');
        await c.query(NOTIFY_FUNCTION);
        await c.query('grant usage on schema tessera_realtime to public');
        // Extensions projects may use (pgvector) live in one shared schema on every project's search path, as
        // Supabase does: `public` is closed to project roles below.
        await c.query(`create schema if not exists ${EXTENSIONS_SCHEMA}`);
        await c.query(`grant usage on schema ${EXTENSIONS_SCHEMA} to public`);
      });
      await enablePgvector();
      // Project roles connect to this database only, and must not reach the platform's own tables, functions
      // or temporary schemas through PUBLIC's default privileges. Best effort: a platform role that does not
      // own the database cannot revoke (then table privileges still keep projects out).
      for (const sql of [`revoke all on schema public from public`, `revoke connect, temporary on database ${ident(database)} from public`]) {
        await admin.query(sql).catch((err: Error) => logger.warn({ err: err.message, sql }, 'data: could not harden the database'));
      }
      await syncSessionDefaults();
    },

    load,

    /** Creates the project's schema and roles (idempotent). */
    async create(projectId: string): Promise<ProjectRole> {
      return await tx(admin, async (c) => {
        const schemaName = schemaNameOf(projectId);
        const roleName = roleNameOf(database, projectId);
        const userRoleName = userRoleNameOf(database, projectId);
        const { rows } = await c.query<{ password_sealed: string }>('select password_sealed from data_project_roles where project_id = $1', [projectId]);
        let password: string;
        if (rows[0]) {
          password = box.decrypt(rows[0].password_sealed);
        } else {
          password = crypto.randomBytes(24).toString('base64url');
          await c.query(
            'insert into data_project_roles (project_id, schema_name, role_name, user_role_name, password_sealed) values ($1, $2, $3, $4, $5)',
            [projectId, schemaName, roleName, userRoleName, box.encrypt(password)],
          );
        }
        const exists = async (role: string) => (await c.query('select 1 from pg_roles where rolname = $1', [role])).rowCount! > 0;
        const attrs = 'nosuperuser nocreatedb nocreaterole noreplication nobypassrls';
        const verifier = literal(scramVerifier(password));
        if (await exists(roleName)) await c.query(`alter role ${ident(roleName)} with login noinherit ${attrs} password ${verifier}`);
        else await c.query(`create role ${ident(roleName)} with login noinherit ${attrs} connection limit 50 password ${verifier}`);
        if (!(await exists(userRoleName))) await c.query(`create role ${ident(userRoleName)} with nologin ${attrs}`);
        // The platform role manages what the project owns; the login role may switch to the end-user role.
        await c.query(`grant ${ident(roleName)}, ${ident(userRoleName)} to current_user`);
        await c.query(`grant ${ident(userRoleName)} to ${ident(roleName)}`);
        await c.query(`create schema if not exists ${ident(schemaName)} authorization ${ident(roleName)}`);
        await c.query(`grant usage on schema ${ident(schemaName)} to ${ident(userRoleName)}`);
        await c.query(`grant connect on database ${ident(database)} to ${ident(roleName)}`);
        await setSessionDefaults(c, roleName, schemaName);
        // Tables the project creates are open to its end-user role; row level security decides which rows.
        await c.query(`alter default privileges for role ${ident(roleName)} in schema ${ident(schemaName)} grant select, insert, update, delete on tables to ${ident(userRoleName)}`);
        await c.query(`alter default privileges for role ${ident(roleName)} in schema ${ident(schemaName)} grant usage, select on sequences to ${ident(userRoleName)}`);
        return { projectId, schemaName, roleName, userRoleName, password };
      });
    },

    /** Drops the project's schema (with every table) and its roles (idempotent). */
    async drop(projectId: string): Promise<void> {
      drops++;
      roles.delete(projectId);
      await tx(admin, async (c) => {
        const schemaName = schemaNameOf(projectId);
        const roles = [roleNameOf(database, projectId), userRoleNameOf(database, projectId)];
        await c.query(`drop schema if exists ${ident(schemaName)} cascade`);
        for (const role of roles) {
          if ((await c.query('select 1 from pg_roles where rolname = $1', [role])).rowCount === 0) continue;
          await c.query(`drop owned by ${ident(role)} cascade`);
          await c.query(`drop role ${ident(role)}`);
        }
        await c.query('delete from data_project_roles where project_id = $1', [projectId]);
        await c.query('delete from data_realtime_tables where project_id = $1', [projectId]);
      });
      drops++;
      roles.delete(projectId);
    },
  };
}
