// SQL for each data API action, built from a request body and the table's catalog entry.
// Identifiers come only from the catalog (quoted); every value is a bound parameter.
import { AppError, errors } from '../../../platform/errors.ts';
import { columnOf, type TableMeta } from './catalog.ts';
import {
  bindValue,
  checkLimit,
  compileOrderBy,
  compileWhere,
  ident,
  isPlainObject,
  Params,
  type Resolve,
} from './where.ts';

export const LIMITS = {
  defaultLimit: 100,
  maxLimit: 1000,
  maxInsertRows: 1000,
  defaultK: 10,
  maxK: 1000,
  maxAggregates: 50,
  maxDimensions: 16_000,
};

export type Built = { sql: string; params: unknown[] };
type Body = Record<string, unknown>;

const qualified = (schema: string, t: TableMeta) => `${ident(schema)}.${ident(t.name)}`;
const columnsOf =
  (t: TableMeta): Resolve =>
  (key, field) => ({ sql: ident(columnOf(t, key, field).name), column: columnOf(t, key, field) });

function selectList(t: TableMeta, select: unknown, field = 'select'): string {
  if (select === undefined || select === null) return '*';
  if (!Array.isArray(select) || select.length === 0)
    throw errors.validation(field, 'expected a non-empty array of column names');
  return select.map((c, i) => ident(columnOf(t, c, `${field}[${i}]`).name)).join(', ');
}

function returningList(t: TableMeta, returning: unknown): string {
  if (returning === undefined || returning === null || returning === true || returning === '*') return ' returning *';
  if (returning === false) return '';
  return ` returning ${selectList(t, returning, 'returning')}`;
}

function whereClause(t: TableMeta, where: unknown, p: Params): string {
  const w = compileWhere(where, columnsOf(t), p);
  return w ? ` where ${w}` : '';
}

/**
 * A write that answers its rows (update and delete have no limit of their own) is wrapped so that, past `maxRows`
 * rows, the statement fails (SQLSTATE 54T01, from the project template's tessera_limits.check_rows) and with it the
 * write: nothing half done, and never millions of rows held in this process.
 */
function capped(dml: string, returning: string, maxRows: number | undefined, p: Params): string {
  if (!returning || maxRows === undefined) return `${dml}${returning}`;
  return `with w as (${dml}${returning}) select w.* from w where tessera_limits.check_rows((select count(*) from w), ${p.add(maxRows)})`;
}

function requireWhere(body: Body, action: string): void {
  const empty =
    body.where === undefined ||
    body.where === null ||
    (isPlainObject(body.where) && Object.keys(body.where).length === 0);
  if (empty && body.all !== true) {
    throw errors.validation('where', `${action} needs a where; send "all": true to ${action} every row of the table`);
  }
  if (body.all !== undefined && body.all !== null && typeof body.all !== 'boolean')
    throw errors.validation('all', 'expected true or false');
}

/** find and findOne. */
export function buildFind(schema: string, t: TableMeta, body: Body, one = false): Built {
  const p = new Params();
  const where = whereClause(t, body.where, p);
  const order = compileOrderBy(body.orderBy, columnsOf(t));
  const limit = one ? 1 : checkLimit(body.limit, LIMITS.defaultLimit, LIMITS.maxLimit);
  let offset = 0;
  if (!one && body.offset !== undefined && body.offset !== null) {
    if (typeof body.offset !== 'number' || !Number.isInteger(body.offset) || body.offset < 0)
      throw errors.validation('offset', 'expected a whole number of 0 or more');
    offset = body.offset;
  }
  const sql = `select ${selectList(t, body.select)} from ${qualified(schema, t)}${where}${order} limit ${limit}${offset ? ` offset ${offset}` : ''}`;
  return { sql, params: p.values };
}

/** insert: one row object or an array of them. */
export function buildInsert(schema: string, t: TableMeta, body: Body): Built {
  const values = body.values;
  const rows = Array.isArray(values) ? values : [values];
  if (values === undefined || values === null)
    throw errors.validation('values', 'required: a row object or an array of row objects');
  if (rows.length === 0) throw errors.validation('values', 'expected at least one row');
  if (rows.length > LIMITS.maxInsertRows)
    throw errors.validation('values', `at most ${LIMITS.maxInsertRows} rows per insert`);
  const columns: string[] = [];
  rows.forEach((r, i) => {
    const f = Array.isArray(values) ? `values[${i}]` : 'values';
    if (!isPlainObject(r)) throw errors.validation(f, 'expected a row object');
    for (const k of Object.keys(r)) {
      if (columns.includes(k)) continue;
      columnOf(t, k, `${f}.${k}`);
      columns.push(k);
    }
  });
  const p = new Params();
  const target = qualified(schema, t);
  const ret = returningList(t, body.returning);
  if (columns.length === 0) {
    if (rows.length > 1) throw errors.validation('values', 'rows without columns can only be inserted one at a time');
    return { sql: `insert into ${target} default values${ret}`, params: [] };
  }
  const tuples = rows.map((r, i) => {
    const row = r as Body;
    const f = Array.isArray(values) ? `values[${i}]` : 'values';
    return `(${columns.map((c) => (c in row ? p.add(bindValue(t.columns.get(c), row[c], `${f}.${c}`)) : 'default')).join(', ')})`;
  });
  return {
    sql: `insert into ${target} (${columns.map(ident).join(', ')}) values ${tuples.join(', ')}${ret}`,
    params: p.values,
  };
}

/** update: `set` on the rows matching `where` (or every row with `all: true`); at most `maxRows` rows answered. */
export function buildUpdate(schema: string, t: TableMeta, body: Body, maxRows?: number): Built {
  requireWhere(body, 'update');
  if (!isPlainObject(body.set) || Object.keys(body.set).length === 0)
    throw errors.validation('set', 'expected an object of column values');
  const p = new Params();
  const set = Object.entries(body.set).map(
    ([k, v]) => `${ident(columnOf(t, k, `set.${k}`).name)} = ${p.add(bindValue(t.columns.get(k), v, `set.${k}`))}`,
  );
  const where = whereClause(t, body.where, p);
  return {
    sql: capped(
      `update ${qualified(schema, t)} set ${set.join(', ')}${where}`,
      returningList(t, body.returning),
      maxRows,
      p,
    ),
    params: p.values,
  };
}

/** delete: the rows matching `where` (or every row with `all: true`); at most `maxRows` rows answered. */
export function buildDelete(schema: string, t: TableMeta, body: Body, maxRows?: number): Built {
  requireWhere(body, 'delete');
  const p = new Params();
  const where = whereClause(t, body.where, p);
  return {
    sql: capped(`delete from ${qualified(schema, t)}${where}`, returningList(t, body.returning), maxRows, p),
    params: p.values,
  };
}

const AGGREGATE_FUNCTIONS = new Set(['count', 'sum', 'avg', 'min', 'max']);
const ALIAS = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** aggregate: count/sum/avg/min/max with groupBy, where, having, orderBy and limit. */
export function buildAggregate(schema: string, t: TableMeta, body: Body): Built {
  const aggs = body.aggregates;
  if (!Array.isArray(aggs) || aggs.length === 0)
    throw errors.validation('aggregates', 'expected a non-empty array of {fn, column, as}');
  if (aggs.length > LIMITS.maxAggregates)
    throw errors.validation('aggregates', `at most ${LIMITS.maxAggregates} aggregates`);
  const groupBy = body.groupBy ?? [];
  if (!Array.isArray(groupBy)) throw errors.validation('groupBy', 'expected an array of column names');
  const groups = groupBy.map((c, i) => columnOf(t, c, `groupBy[${i}]`).name);
  const exprs = new Map<string, string>();
  aggs.forEach((a, i) => {
    const f = `aggregates[${i}]`;
    if (!isPlainObject(a)) throw errors.validation(f, 'expected {fn, column, as}');
    const fn = typeof a.fn === 'string' ? a.fn.toLowerCase() : '';
    if (!AGGREGATE_FUNCTIONS.has(fn))
      throw errors.validation(`${f}.fn`, `expected one of count, sum, avg, min, max, got ${JSON.stringify(a.fn)}`);
    let arg = '*';
    if (a.column !== undefined && a.column !== null && a.column !== '*')
      arg = ident(columnOf(t, a.column, `${f}.column`).name);
    else if (fn !== 'count') throw errors.validation(`${f}.column`, `${fn} needs a column`);
    const distinct = a.distinct === true && arg !== '*' ? 'distinct ' : '';
    const alias = a.as ?? (arg === '*' ? fn : `${fn}_${String(a.column)}`);
    if (typeof alias !== 'string' || !ALIAS.test(alias))
      throw errors.validation(`${f}.as`, 'expected an alias of letters, digits and underscores');
    if (exprs.has(alias) || groups.includes(alias))
      throw errors.validation(`${f}.as`, `alias "${alias}" is used twice`);
    exprs.set(alias, `${fn}(${distinct}${arg})`);
  });
  const resolveOutput = (key: string, field: string) => {
    const e = exprs.get(key);
    if (e) return { sql: e };
    if (groups.includes(key)) return { sql: ident(key), column: t.columns.get(key) };
    throw new AppError('VALIDATION_FAILED', `${field}: "${key}" is neither an aggregate alias nor a groupBy column`, {
      field,
    });
  };
  const p = new Params();
  const where = whereClause(t, body.where, p);
  const having = compileWhere(body.having, resolveOutput, p, 'having');
  const order = compileOrderBy(body.orderBy, (k, f) => (exprs.has(k) ? { sql: ident(k) } : resolveOutput(k, f)));
  const limit = checkLimit(body.limit, LIMITS.defaultLimit, LIMITS.maxLimit);
  const list = [...groups.map(ident), ...[...exprs].map(([alias, e]) => `${e} as ${ident(alias)}`)].join(', ');
  const sql = `select ${list} from ${qualified(schema, t)}${where}${groups.length ? ` group by ${groups.map(ident).join(', ')}` : ''}${having ? ` having ${having}` : ''}${order} limit ${limit}`;
  return { sql, params: p.values };
}

const PGVECTOR_OPERATORS: Record<string, string> = { l2: '<->', cosine: '<=>', inner_product: '<#>' };
export const PGVECTOR_OPCLASSES: Record<string, string> = {
  l2: 'vector_l2_ops',
  cosine: 'vector_cosine_ops',
  inner_product: 'vector_ip_ops',
};

/** Whether an HNSW index with the metric's operator class serves the column: $1 schema, $2 table, $3 column, $4 opclass. */
export const HNSW_INDEX_SQL = `select 1 from pg_index i join pg_class ic on ic.oid = i.indexrelid join pg_am am on am.oid = ic.relam
  join pg_class c on c.oid = i.indrelid join pg_namespace n on n.oid = c.relnamespace
  join pg_attribute a on a.attrelid = c.oid and a.attnum = i.indkey[0] join pg_opclass o on o.oid = i.indclass[0]
  where n.nspname = $1 and c.relname = $2 and a.attname = $3 and am.amname = 'hnsw' and o.opcname = $4`;

/** Checks the vectorSearch body; answers the column and the metric. */
export function checkVectorBody(t: TableMeta, body: Body): { column: string; metric: string; pgvector: boolean } {
  const col = columnOf(t, body.column, 'column');
  const pgvector = col.typname === 'vector';
  const floatArray = ['_float4', '_float8', '_numeric'].includes(col.typname);
  if (!pgvector && !floatArray)
    throw errors.validation(
      'column',
      `column "${col.name}" (${col.type}) is not a vector: use a pgvector "vector" or a "real[]" column`,
    );
  const metric = body.metric ?? 'cosine';
  if (typeof metric !== 'string' || !(metric in PGVECTOR_OPERATORS))
    throw errors.validation('metric', `expected cosine, l2 or inner_product, got ${JSON.stringify(body.metric)}`);
  const v = body.vector;
  if (
    !Array.isArray(v) ||
    v.length === 0 ||
    v.length > LIMITS.maxDimensions ||
    !v.every((x) => typeof x === 'number' && Number.isFinite(x))
  ) {
    throw errors.validation('vector', `expected an array of 1 to ${LIMITS.maxDimensions} numbers`);
  }
  return { column: col.name, metric, pgvector };
}

/**
 * vectorSearch: with pgvector the distance operator (an HNSW index serves `order by <op> limit k`);
 * on real[] columns an exact scan computing the distance in SQL. `_distance` is the distance
 * (cosine: 1 - cosine similarity; l2: Euclidean; inner_product: the negative inner product).
 */
export function buildVectorSearch(
  schema: string,
  t: TableMeta,
  body: Body,
): Built & { pgvector: boolean; column: string; metric: string } {
  const { column, metric, pgvector } = checkVectorBody(t, body);
  const k = checkLimit(body.k, LIMITS.defaultK, LIMITS.maxK, 'k');
  const p = new Params();
  const c = ident(column);
  const vec = body.vector as number[];
  let distance: string;
  let filter = '';
  if (pgvector) {
    distance = `${c} ${PGVECTOR_OPERATORS[metric]} ${p.add(JSON.stringify(vec))}`;
  } else {
    const q = p.add(vec);
    const pairs = `unnest(${c}::float8[], ${q}::float8[]) as u(a, b)`;
    distance =
      metric === 'cosine'
        ? `(select 1 - sum(a * b) / nullif(sqrt(sum(a * a)) * sqrt(sum(b * b)), 0) from ${pairs})`
        : metric === 'l2'
          ? `(select sqrt(sum((a - b) * (a - b))) from ${pairs})`
          : `(select -sum(a * b) from ${pairs})`;
    filter = `cardinality(${c}) = ${vec.length}`;
  }
  const w = compileWhere(body.where, columnsOf(t), p);
  const conditions = [filter, w].filter(Boolean);
  const where = conditions.length ? ` where ${conditions.join(' and ')}` : '';
  const select = body.select === undefined || body.select === null ? '*' : selectList(t, body.select);
  const sql = `select ${select}, ${distance} as "_distance" from ${qualified(schema, t)}${where} order by ${distance} limit ${k}`;
  return { sql, params: p.values, pgvector, column, metric };
}
