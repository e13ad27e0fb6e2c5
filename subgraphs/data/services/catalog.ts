// The live catalog of a project's schema: every identifier a request names is checked against it.
// Cached per project in every process, and kept right by broadcasts: rawSQL (which may change tables, directly or
// through a function it calls) drops the entry here at once and announces `data.catalog.changed`, which drops it in
// every other process; the whole cache is dropped when the broadcast connection resets (messages may have been
// missed), and nothing is cached while it is down. A name the entry does not know is looked up again before a
// request is refused (a table or column made by the project's own trigger or function, which no rawSQL announced),
// and a statement the server refuses for an unknown or mistyped column drops the entry too. Entries also age out
// (10 min), so a change no path above saw cannot linger.
import { LRUCache } from 'lru-cache';
import pg from 'pg';
import { publishBroadcastNow, startBroadcastListener, type BroadcastListener } from '../../../platform/broadcast.ts';
import { AppError, errors } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import type { Db } from './pools.ts';

export type ColumnMeta = {
  name: string;
  /** `format_type` of the column, e.g. `integer`, `text[]`, `vector(3)`. */
  type: string;
  /** The base type's name (`int4`, `_float4`, `vector`, `jsonb`). */
  typname: string;
  /** pg_type.typcategory: S string, N numeric, A array, U user-defined (json, vector), B boolean, D date/time. */
  category: string;
  notNull: boolean;
};

export type TableMeta = {
  name: string;
  kind: string;
  rls: boolean;
  columns: Map<string, ColumnMeta>;
  primaryKey: string[];
};

export type Catalog = ReturnType<typeof createCatalog>;

const TTL_MS = 10 * 60_000;

/** Server errors that mean the statement was built from a stale catalog (undefined table/column, wrong type). */
const STALE_SQLSTATES = new Set(['42P01', '42703', '42804', '42883']);

const COLUMNS_SQL = `select c.relname as table_name, c.relkind, c.relrowsecurity, a.attname, format_type(a.atttypid, a.atttypmod) as type,
    t.typname, t.typcategory, a.attnotnull, coalesce(a.attnum = any(i.indkey), false) as pk
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  join pg_type t on t.oid = a.atttypid
  left join pg_index i on i.indrelid = c.oid and i.indisprimary
  where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f')
  order by c.relname, a.attnum`;

type Row = {
  table_name: string;
  relkind: string;
  relrowsecurity: boolean;
  attname: string;
  type: string;
  typname: string;
  typcategory: string;
  attnotnull: boolean;
  pk: boolean;
};

/**
 * Creates the catalog cache; `start` begins listening for changes on `databaseUrl` (until then nothing is cached).
 * Without a `databaseUrl` it caches at once and hears of changes only through `invalidate` (one process alone on its
 * database: tests, the vector benchmark).
 */
export function createCatalog(opts: { databaseUrl?: string; logger?: Logger } = {}) {
  const standalone = !opts.databaseUrl;
  const cache = new LRUCache<string, Map<string, TableMeta>>({ max: 10_000, ttl: TTL_MS });
  let listener: BroadcastListener | undefined;
  // Bumped by every invalidation of a schema (`epoch`: of everything): a load that overlapped one is not kept (it may
  // predate the change).
  const generations = new Map<string, number>();
  let epoch = 0;
  const clear = () => {
    cache.clear();
    generations.clear();
    epoch++;
  };
  const bump = (schema: string) => {
    cache.delete(schema);
    generations.set(schema, (generations.get(schema) ?? 0) + 1);
    if (generations.size > 10_000) clear();
  };

  const load = async (db: Db, schema: string): Promise<Map<string, TableMeta>> => {
    let tables = cache.get(schema);
    if (tables) return tables;
    const generation = generations.get(schema);
    const startEpoch = epoch;
    const { rows } = await db.query<Row>(COLUMNS_SQL, [schema]);
    tables = new Map();
    for (const r of rows) {
      let t = tables.get(r.table_name);
      if (!t) {
        t = { name: r.table_name, kind: r.relkind, rls: r.relrowsecurity, columns: new Map(), primaryKey: [] };
        tables.set(r.table_name, t);
      }
      t.columns.set(r.attname, {
        name: r.attname,
        type: r.type,
        typname: r.typname,
        category: r.typcategory,
        notNull: r.attnotnull,
      });
      if (r.pk) t.primaryKey.push(r.attname);
    }
    if ((standalone || listener?.listening()) && generations.get(schema) === generation && epoch === startEpoch)
      cache.set(schema, tables);
    return tables;
  };

  return {
    async start(): Promise<void> {
      if (!opts.databaseUrl || !opts.logger) return;
      const l = await startBroadcastListener({ url: opts.databaseUrl, logger: opts.logger });
      l.on('data.catalog.changed', (payload) => {
        if (typeof payload?.schema === 'string') bump(payload.schema);
      });
      l.onReset(clear);
      listener = l;
    },
    async stop(): Promise<void> {
      const l = listener;
      listener = undefined;
      clear();
      await l?.stop();
    },
    /** Whether the schema's tables are known here without asking the server (tests). */
    cached: (schema: string): boolean => cache.has(schema),
    /** The names of the schema's tables (ordinary and partitioned; not views), as the server has them now. */
    async tableNames(db: Db, schema: string): Promise<string[]> {
      bump(schema); // asked rarely (a switch turned on), and a table may just have been made: read it afresh
      return [...(await load(db, schema)).values()].filter((t) => t.kind === 'r' || t.kind === 'p').map((t) => t.name);
    },
    /** The table, or NOT_FOUND naming it. */
    async table(db: Db, schema: string, name: unknown, field = 'table'): Promise<TableMeta> {
      if (typeof name !== 'string' || name === '') throw errors.validation(field, 'expected a table name');
      const wasCached = cache.has(schema);
      let t = (await load(db, schema)).get(name);
      if (!t && wasCached) {
        bump(schema); // it may have just been created
        t = (await load(db, schema)).get(name);
      }
      if (!t) throw new AppError('NOT_FOUND', `Table "${name}" does not exist`, { resource: 'table', table: name });
      return t;
    },
    /** Forgets what is known about a schema here (after DDL, or a statement refused as stale). */
    invalidate(schema: string): void {
      bump(schema);
    },
    /** Forgets the schema here and in every other process (after anything that may have changed its tables). */
    async announce(admin: pg.Pool, schema: string): Promise<void> {
      bump(schema);
      await publishBroadcastNow(admin, 'data.catalog.changed', { schema });
    },
    /** Drops the entry when the server refused a statement as built from a stale catalog. */
    noteError(schema: string, err: unknown): void {
      const code =
        err instanceof pg.DatabaseError ? err.code : err instanceof AppError ? err.details?.sqlstate : undefined;
      if (typeof code === 'string' && STALE_SQLSTATES.has(code)) bump(schema);
    },
    /** Whether `err` refuses a column name this catalog did not know (worth one look at a fresh catalog). */
    isUnknownColumn(err: unknown): boolean {
      return (
        err instanceof AppError &&
        err.code === 'VALIDATION_FAILED' &&
        typeof err.details?.column === 'string' &&
        typeof err.details?.table === 'string' &&
        err.details?.sqlstate === undefined
      );
    },
  };
}

/** The column, or a 400 naming it. */
export function columnOf(table: TableMeta, name: unknown, field: string): ColumnMeta {
  if (typeof name !== 'string' || name === '') throw errors.validation(field, 'expected a column name');
  const c = table.columns.get(name);
  if (!c)
    throw new AppError('VALIDATION_FAILED', `${field}: column "${name}" does not exist in table "${table.name}"`, {
      field,
      column: name,
      table: table.name,
    });
  return c;
}
