// The live catalog of a project's schema: every identifier a request names is checked against it.
// Cached briefly per project; rawSQL (which may change tables) and "unknown table" errors drop the entry.
import type pg from 'pg';
import { LRUCache } from 'lru-cache';
import { AppError, errors } from '../../../platform/errors.ts';

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

export type TableMeta = { name: string; kind: string; rls: boolean; columns: Map<string, ColumnMeta>; primaryKey: string[] };

export type Catalog = ReturnType<typeof createCatalog>;

const TTL_MS = 5_000;

const COLUMNS_SQL = `select c.relname as table_name, c.relkind, c.relrowsecurity, a.attname, format_type(a.atttypid, a.atttypmod) as type,
    t.typname, t.typcategory, a.attnotnull, coalesce(a.attnum = any(i.indkey), false) as pk
  from pg_class c
  join pg_namespace n on n.oid = c.relnamespace
  join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
  join pg_type t on t.oid = a.atttypid
  left join pg_index i on i.indrelid = c.oid and i.indisprimary
  where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'f')
  order by c.relname, a.attnum`;

type Row = { table_name: string; relkind: string; relrowsecurity: boolean; attname: string; type: string; typname: string; typcategory: string; attnotnull: boolean; pk: boolean };

/** Creates the catalog cache. */
export function createCatalog() {
  const cache = new LRUCache<string, Map<string, TableMeta>>({ max: 1000, ttl: TTL_MS });

  const load = async (db: pg.Pool | pg.PoolClient, schema: string): Promise<Map<string, TableMeta>> => {
    let tables = cache.get(schema);
    if (tables) return tables;
    const { rows } = await db.query<Row>(COLUMNS_SQL, [schema]);
    tables = new Map();
    for (const r of rows) {
      let t = tables.get(r.table_name);
      if (!t) {
        t = { name: r.table_name, kind: r.relkind, rls: r.relrowsecurity, columns: new Map(), primaryKey: [] };
        tables.set(r.table_name, t);
      }
      t.columns.set(r.attname, { name: r.attname, type: r.type, typname: r.typname, category: r.typcategory, notNull: r.attnotnull });
      if (r.pk) t.primaryKey.push(r.attname);
    }
    cache.set(schema, tables);
    return tables;
  };

  return {
    /** The table, or NOT_FOUND naming it. */
    async table(db: pg.Pool | pg.PoolClient, schema: string, name: unknown, field = 'table'): Promise<TableMeta> {
      if (typeof name !== 'string' || name === '') throw errors.validation(field, 'expected a table name');
      let t = (await load(db, schema)).get(name);
      if (!t) {
        cache.delete(schema); // it may have just been created
        t = (await load(db, schema)).get(name);
      }
      if (!t) throw new AppError('NOT_FOUND', `Table "${name}" does not exist`, { resource: 'table', table: name });
      return t;
    },
    /** Forgets what is known about a schema (after DDL). */
    invalidate(schema: string): void {
      cache.delete(schema);
    },
  };
}

/** The column, or a 400 naming it. */
export function columnOf(table: TableMeta, name: unknown, field: string): ColumnMeta {
  if (typeof name !== 'string' || name === '') throw errors.validation(field, 'expected a column name');
  const c = table.columns.get(name);
  if (!c) throw new AppError('VALIDATION_FAILED', `${field}: column "${name}" does not exist in table "${table.name}"`, { field, column: name, table: table.name });
  return c;
}
