// Migrations (`tessera db push`, the console's migrations page) and the schema endpoint (`GET /v1/schema`).
//
// Applied migrations are recorded in `tessera_migrations`, a table of the project's own schema, like Supabase's
// `supabase_migrations.schema_migrations` in the project's database: the record travels with the data (a dump, a
// move to another server, a restore keep it) and is written in the same transaction as the migration itself, on the
// project's own connection. A migration's SQL runs exactly as a rawSQL script does (actions.ts `transaction` with a
// `rawSQL` operation): as the project's role, each statement through the SQL guard, all or nothing; never as the
// platform's role. The platform makes the table once (as the project's role) and closes it to the end-user and
// anonymous roles; the project may read it, and could change its own record like any of its tables.
import crypto from 'node:crypto';
import type { Principal } from '../../../platform/auth.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Actions } from './actions.ts';
import type { Catalog } from './catalog.ts';
import { ident } from './names.ts';
import type { RolePools } from './pools.ts';
import type { ProjectRole, Provisioning } from './provisioning.ts';
import { MIGRATIONS_TABLE, readProjectSchema, schemaToSql, type ProjectSchema } from './schema-introspection.ts';
import pg from 'pg';

export type Migrations = ReturnType<typeof createMigrations>;

export type AppliedMigration = { version: string; name: string; checksum: string; appliedAt: string };

/** A version is digits (the CLI writes a UTC timestamp, YYYYMMDDHHMMSS); a name is a short identifier-like label. */
const VERSION = /^[0-9]{1,32}$/;
const NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]{0,99}$/;
const MAX_SQL = 1_000_000;

/** The checksum the CLI computes too: sha256 of the file's bytes (UTF-8), hex. */
export const checksumOf = (sql: string): string => crypto.createHash('sha256').update(sql, 'utf8').digest('hex');

/** Creates the migrations service over the actions (which run the SQL) and the project's pools (which read the catalog). */
export function createMigrations(deps: {
  provisioning: Provisioning;
  pools: RolePools;
  catalog: Catalog;
  actions: Actions;
  announce: (schema: string) => Promise<void>;
}) {
  const { provisioning, pools, actions } = deps;

  /** The project of a project key or of a client token (the admin-scope check let only those with admin:sql through). */
  const roleOf = async (principal: Principal): Promise<ProjectRole> => {
    if (principal.kind === 'anonymous') throw errors.unauthenticated('Send the project secret key (X-Api-Key)');
    if (principal.kind !== 'project')
      throw errors.forbidden(
        "The project's schema and migrations take the secret key (or a client token with admin:sql)",
      );
    return await provisioning.ensure(principal.projectId);
  };

  const table = (role: ProjectRole) => `${ident(role.schemaName)}.${ident(MIGRATIONS_TABLE)}`;

  /** Makes the record table once (as the project's role), closed to end-users and anonymous visitors. */
  const ensureTable = async (role: ProjectRole): Promise<void> => {
    const pool = pools.get(role);
    const { rowCount } = await pool.query(
      `select 1 from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace where n.nspname = $1 and c.relname = $2`,
      [role.schemaName, MIGRATIONS_TABLE],
    );
    if (rowCount) return;
    const client = await pool.connect();
    let broken = false;
    try {
      await client.query('begin');
      await client.query(`create table if not exists ${table(role)} (
        version text primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`);
      await client.query(`alter table ${table(role)} enable row level security`);
      const others = [role.userRoleName, ...(role.anonReady ? [role.anonRoleName] : [])].map(ident).join(', ');
      await client.query(`revoke all on ${table(role)} from ${others}`);
      await client.query('commit');
    } catch (err) {
      await client.query('rollback').catch(() => {
        broken = true;
      });
      // Two first pushes at once: the other one made it.
      if (!(err instanceof pg.DatabaseError && (err.code === '23505' || err.code === '42P07'))) throw err;
    } finally {
      client.release(broken);
    }
    await deps.announce(role.schemaName);
  };

  const list = async (role: ProjectRole): Promise<AppliedMigration[]> => {
    try {
      const { rows } = await pools
        .get(role)
        .query<{ version: string; name: string; checksum: string; applied_at: Date }>(
          `select version, name, checksum, applied_at from ${table(role)} order by length(version), version`,
        );
      return rows.map((r) => ({
        version: r.version,
        name: r.name,
        checksum: r.checksum,
        appliedAt: r.applied_at.toISOString(),
      }));
    } catch (err) {
      if (err instanceof pg.DatabaseError && err.code === '42P01') return []; // nothing applied yet
      throw err;
    }
  };

  return {
    /** The project's schema: tables, views, functions, grants (JSON). */
    async schema(principal: Principal): Promise<ProjectSchema> {
      const role = await roleOf(principal);
      return await readProjectSchema(pools.get(role), role);
    },
    /** The project's schema as a runnable SQL script. */
    async schemaSql(principal: Principal): Promise<string> {
      return schemaToSql(await this.schema(principal));
    },
    /** The applied migrations, oldest first. */
    async list(principal: Principal): Promise<AppliedMigration[]> {
      return await list(await roleOf(principal));
    },
    /**
     * Applies one migration: its SQL as a rawSQL script (the project's role, the guard, one transaction) and its
     * record, together. The same version again: a no-op when its checksum matches, 409 naming it otherwise. With
     * `recordOnly` the SQL is not run, only recorded (`db pull`: the file describes what the project has already).
     */
    async apply(
      principal: Principal,
      input: { version?: unknown; name?: unknown; sql?: unknown; recordOnly?: unknown },
      o: { depth?: number; requestId?: string } = {},
    ): Promise<{ applied: boolean; migration: AppliedMigration }> {
      const { version, name, sql, recordOnly } = input;
      if (typeof version !== 'string' || !VERSION.test(version))
        throw errors.validation('version', 'expected digits, e.g. a UTC timestamp 20260101120000');
      if (typeof name !== 'string' || !NAME.test(name))
        throw errors.validation('name', 'expected 1-100 letters, digits, _ . or - (the file name after the version)');
      if (typeof sql !== 'string') throw errors.validation('sql', 'expected the migration file as text');
      if (sql.length > MAX_SQL) throw errors.validation('sql', `at most ${MAX_SQL} characters`);
      const role = await roleOf(principal);
      const checksum = checksumOf(sql);
      const existing = async () => (await list(role)).find((m) => m.version === version);
      const same = (m: AppliedMigration) => {
        if (m.checksum === checksum) return { applied: false, migration: m };
        throw errors.conflict(
          `Migration ${m.version}_${m.name} was applied with checksum ${m.checksum}, and the file sent now has ${checksum}: an applied migration must not change (add a new migration instead)`,
          { version: m.version, name: m.name, applied_checksum: m.checksum, checksum },
        );
      };
      const before = await existing();
      if (before) return same(before);
      await ensureTable(role);
      const empty = sql.replace(/--[^\n]*|\/\*[\s\S]*?\*\//g, '').trim() === '';
      const record = {
        action: 'insert',
        table: MIGRATIONS_TABLE,
        values: { version, name, checksum },
        returning: false,
      };
      const operations = recordOnly === true || empty ? [record] : [{ action: 'rawSQL', sql }, record];
      try {
        await actions.transaction(principal, operations, o);
      } catch (err) {
        // Another push recorded the same version meanwhile: answer as if it had been there first.
        if (err instanceof AppError && err.code === 'CONFLICT' && err.details?.operation === operations.length - 1) {
          const now = await existing();
          if (now) return same(now);
        }
        if (err instanceof AppError && err.details?.operation === 0 && operations.length === 2) {
          // The transaction's operation index means nothing to the caller: the migration and its statement do.
          const { operation: _op, ...details } = err.details;
          throw new AppError(
            err.code,
            `Migration ${version}_${name} failed, nothing of it was kept: ${err.message.replace(/^operations\[0\] \(rawSQL\): /, '')}`,
            { ...details, version, name },
          );
        }
        throw err;
      }
      const done = await existing();
      return { applied: true, migration: done! };
    },
  };
}
