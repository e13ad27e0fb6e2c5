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
        if (await exists(roleName)) await c.query(`alter role ${ident(roleName)} with login noinherit ${attrs} password ${literal(password)}`);
        else await c.query(`create role ${ident(roleName)} with login noinherit ${attrs} connection limit 50 password ${literal(password)}`);
        if (!(await exists(userRoleName))) await c.query(`create role ${ident(userRoleName)} with nologin ${attrs}`);
        // The platform role manages what the project owns; the login role may switch to the end-user role.
        await c.query(`grant ${ident(roleName)}, ${ident(userRoleName)} to current_user`);
        await c.query(`grant ${ident(userRoleName)} to ${ident(roleName)}`);
        await c.query(`create schema if not exists ${ident(schemaName)} authorization ${ident(roleName)}`);
        await c.query(`grant usage on schema ${ident(schemaName)} to ${ident(userRoleName)}`);
        await c.query(`grant connect on database ${ident(database)} to ${ident(roleName)}`);
        await c.query(`alter role ${ident(roleName)} in database ${ident(database)} set search_path = ${ident(schemaName)}, ${EXTENSIONS_SCHEMA}`);
        await c.query(`alter role ${ident(roleName)} in database ${ident(database)} set statement_timeout = ${Number(opts.statementTimeoutMs)}`);
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
