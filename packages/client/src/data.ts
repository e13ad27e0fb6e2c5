// The data API: `from('table')` builders in the style of Supabase's client (`select().eq().order().limit()`), and
// the nine actions with their bodies as they are (`data.find({...})`). Rows are typed by a `Database` type — what
// `tessera gen types` writes for a project — or plain records.
import type { Http } from './http.ts';
import type { AppliedMigration, ApplyMigrationResult, ProjectSchema } from './schema.ts';
import type { ResponseOf } from './types.ts';

/** `GET /v1/usage`: live rows and bytes of the project's database, and the plan's limits on them. */
export type DatabaseUsage = ResponseOf<'/v1/usage', 'get'>['usage'];

export type Row = Record<string, unknown>;
/** Table name → row type (`tessera gen types` writes one for a project). */
export type DatabaseShape = Record<string, Row>;

/** The `where` grammar: a plain value is equality; operators compare; `and`/`or` take lists, `not` an object. */
export type Where = Record<string, unknown>;
export type Operator =
  'eq' | 'ne' | 'gt' | 'gte' | 'lt' | 'lte' | 'in' | 'nin' | 'like' | 'ilike' | 'isNull' | 'contains';
export type OrderBy = string | Record<string, 'asc' | 'desc'> | (string | Record<string, 'asc' | 'desc'>)[];
export type Aggregate = { fn: 'count' | 'sum' | 'avg' | 'min' | 'max'; column?: string; as: string };

export type WriteResult<R> = { count: number; rows: R[] };
/** What each statement of a rawSQL call did (a script answers one per statement). */
export type SqlStatement = { index: number; line: number; command: string | null; rowCount: number | null };
export type SqlResult = {
  rows: Row[];
  rowCount: number | null;
  fields: { name: string; type?: string }[];
  statements: SqlStatement[];
};

/** The actions, bodies as documented (`POST /v1/<action>`). */
export class DataActions {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  /** Any action by name, with its body as is. */
  async action<T = unknown>(action: string, body: Record<string, unknown>): Promise<T> {
    return await this.#http.request<T>('POST', `/v1/${action}`, { body });
  }
  find<R = Row>(body: {
    table: string;
    select?: string[];
    where?: Where;
    orderBy?: OrderBy;
    limit?: number;
    offset?: number;
  }) {
    return this.action<{ rows: R[] }>('find', body);
  }
  findOne<R = Row>(body: { table: string; select?: string[]; where?: Where; orderBy?: OrderBy }) {
    return this.action<{ row: R | null }>('findOne', body);
  }
  insert<R = Row>(body: { table: string; values: Row | Row[]; returning?: boolean | string[] }) {
    return this.action<WriteResult<R>>('insert', body);
  }
  update<R = Row>(body: { table: string; where?: Where; set: Row; all?: boolean; returning?: boolean | string[] }) {
    return this.action<WriteResult<R>>('update', body);
  }
  delete<R = Row>(body: { table: string; where?: Where; all?: boolean; returning?: boolean | string[] }) {
    return this.action<WriteResult<R>>('delete', body);
  }
  aggregate<R = Row>(body: {
    table: string;
    aggregates: Aggregate[];
    groupBy?: string[];
    where?: Where;
    having?: Where;
    orderBy?: OrderBy;
    limit?: number;
  }) {
    return this.action<{ rows: R[] }>('aggregate', body);
  }
  vectorSearch<R = Row>(body: {
    table: string;
    column: string;
    vector: number[];
    k?: number;
    metric?: 'cosine' | 'l2' | 'inner_product';
    where?: Where;
    select?: string[];
  }) {
    return this.action<{ rows: (R & { _distance: number })[]; method: 'hnsw' | 'exact' }>('vectorSearch', body);
  }
  /** Several actions, all or nothing. */
  transaction(operations: ({ action: string } & Record<string, unknown>)[]) {
    return this.action<{ results: unknown[] }>('transaction', { operations });
  }
  /**
   * One parameterized SQL statement, or a script of several (no params) run as one transaction: all or nothing (the
   * secret key, or a client granted `admin:sql`). `statements` says what each did.
   */
  sql(sql: string, params: unknown[] = []) {
    return this.action<SqlResult>('rawSQL', { sql, params });
  }
  /** The database's size against the plan: `{rows, bytes, max_rows, max_bytes, measured_at}` (null max: no limit). */
  async usage(): Promise<DatabaseUsage> {
    return (await this.#http.request<ResponseOf<'/v1/usage', 'get'>>('GET', '/v1/usage')).usage;
  }
  /** The project's schema: tables (columns, keys, indexes, triggers, policies), views, functions, grants. */
  async schema(): Promise<ProjectSchema> {
    return await this.#http.request<ProjectSchema>('GET', '/v1/schema');
  }
  /** The project's schema as a SQL script that recreates it on a fresh project (`tessera db dump --schema`). */
  async schemaSql(): Promise<string> {
    return await this.#http.request<string>('GET', '/v1/schema', { query: { format: 'sql' } });
  }
  /** The migrations applied to the project, oldest first. */
  async migrations(): Promise<AppliedMigration[]> {
    return (await this.#http.request<{ migrations: AppliedMigration[] }>('GET', '/v1/migrations')).migrations;
  }
  /**
   * Applies one migration (its SQL as one all-or-nothing script, recorded with its checksum). Already applied with
   * the same text: `applied: false`; with other text: a 409 TesseraError naming it. `recordOnly`: record, do not run.
   */
  async applyMigration(m: { version: string; name: string; sql: string; recordOnly?: boolean }) {
    return await this.#http.request<ApplyMigrationResult>('POST', '/v1/migrations', { body: m });
  }
}

type Filterable = { where: Where };

function addFilter(target: Filterable, column: string, op: Operator, value: unknown): void {
  const current = target.where[column];
  const ops =
    current && typeof current === 'object' && !Array.isArray(current)
      ? (current as Record<string, unknown>)
      : current === undefined
        ? {}
        : { eq: current };
  target.where[column] = { ...ops, [op]: value };
}

/** Filters shared by every builder (they all end in a `where`). */
abstract class Filters<Self> {
  where: Where = {};
  /** column = value */
  eq(column: string, value: unknown): Self {
    addFilter(this, column, 'eq', value);
    return this as unknown as Self;
  }
  neq(column: string, value: unknown): Self {
    addFilter(this, column, 'ne', value);
    return this as unknown as Self;
  }
  gt(column: string, value: unknown): Self {
    addFilter(this, column, 'gt', value);
    return this as unknown as Self;
  }
  gte(column: string, value: unknown): Self {
    addFilter(this, column, 'gte', value);
    return this as unknown as Self;
  }
  lt(column: string, value: unknown): Self {
    addFilter(this, column, 'lt', value);
    return this as unknown as Self;
  }
  lte(column: string, value: unknown): Self {
    addFilter(this, column, 'lte', value);
    return this as unknown as Self;
  }
  like(column: string, pattern: string): Self {
    addFilter(this, column, 'like', pattern);
    return this as unknown as Self;
  }
  ilike(column: string, pattern: string): Self {
    addFilter(this, column, 'ilike', pattern);
    return this as unknown as Self;
  }
  in(column: string, values: unknown[]): Self {
    addFilter(this, column, 'in', values);
    return this as unknown as Self;
  }
  notIn(column: string, values: unknown[]): Self {
    addFilter(this, column, 'nin', values);
    return this as unknown as Self;
  }
  isNull(column: string, isNull = true): Self {
    addFilter(this, column, 'isNull', isNull);
    return this as unknown as Self;
  }
  contains(column: string, value: unknown): Self {
    addFilter(this, column, 'contains', value);
    return this as unknown as Self;
  }
  /** Any `where` of the grammar, merged in (`{or: [...]}`, `{not: {...}}`). */
  match(where: Where): Self {
    this.where = { ...this.where, ...where };
    return this as unknown as Self;
  }
}

/** `from(table).select(...)`: a find (or `single()`: a findOne), run when awaited. */
export class SelectBuilder<R> extends Filters<SelectBuilder<R>> implements PromiseLike<R[]> {
  readonly #actions: DataActions;
  readonly #table: string;
  #select: string[] | undefined;
  #order: (string | Record<string, 'asc' | 'desc'>)[] = [];
  #limit: number | undefined;
  #offset: number | undefined;

  constructor(actions: DataActions, table: string, columns?: string[]) {
    super();
    this.#actions = actions;
    this.#table = table;
    this.#select = columns;
  }

  order(column: string, opts: { ascending?: boolean } = {}): this {
    this.#order.push(opts.ascending === false ? { [column]: 'desc' } : column);
    return this;
  }
  limit(n: number): this {
    this.#limit = n;
    return this;
  }
  offset(n: number): this {
    this.#offset = n;
    return this;
  }
  /** Rows `from` to `to` (inclusive, 0-based). */
  range(from: number, to: number): this {
    this.#offset = from;
    this.#limit = to - from + 1;
    return this;
  }

  #body() {
    const where = Object.keys(this.where).length ? this.where : undefined;
    return { table: this.#table, select: this.#select, where, orderBy: this.#order.length ? this.#order : undefined };
  }

  /** The rows. */
  async rows(): Promise<R[]> {
    return (await this.#actions.find<R>({ ...this.#body(), limit: this.#limit, offset: this.#offset })).rows;
  }
  /** The first matching row, or null. */
  async single(): Promise<R | null> {
    return (await this.#actions.findOne<R>(this.#body())).row;
  }

  then<A = R[], B = never>(
    onfulfilled?: ((v: R[]) => A | PromiseLike<A>) | null,
    onrejected?: ((e: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this.rows().then(onfulfilled, onrejected);
  }
}

/** `from(table).update(set)` / `.delete()`: needs a filter (or `all()`), run when awaited. */
export class WriteBuilder<R> extends Filters<WriteBuilder<R>> implements PromiseLike<WriteResult<R>> {
  readonly #run: (
    where: Where | undefined,
    all: boolean,
    returning: boolean | string[] | undefined,
  ) => Promise<WriteResult<R>>;
  #all = false;
  #returning: boolean | string[] | undefined;

  constructor(
    run: (where: Where | undefined, all: boolean, returning: boolean | string[] | undefined) => Promise<WriteResult<R>>,
  ) {
    super();
    this.#run = run;
  }
  /** Every row of the table (no filter). */
  all(): this {
    this.#all = true;
    return this;
  }
  /** Columns to answer (`false`: none). */
  returning(columns: boolean | string[]): this {
    this.#returning = columns;
    return this;
  }
  then<A = WriteResult<R>, B = never>(
    onfulfilled?: ((v: WriteResult<R>) => A | PromiseLike<A>) | null,
    onrejected?: ((e: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    return this.#run(Object.keys(this.where).length ? this.where : undefined, this.#all, this.#returning).then(
      onfulfilled,
      onrejected,
    );
  }
}

/** One table. */
export class TableRef<R extends Row> {
  readonly #actions: DataActions;
  readonly table: string;
  constructor(actions: DataActions, table: string) {
    this.#actions = actions;
    this.table = table;
  }
  /** Rows; `columns` as a list or a comma-separated string (`'id, title'`), all when omitted. */
  select(columns?: string | (keyof R & string)[]): SelectBuilder<R> {
    const list =
      typeof columns === 'string'
        ? columns.trim() === '*'
          ? undefined
          : columns
              .split(',')
              .map((c) => c.trim())
              .filter(Boolean)
        : columns;
    return new SelectBuilder<R>(this.#actions, this.table, list);
  }
  async insert(
    values: Partial<R> | Partial<R>[],
    opts: { returning?: boolean | string[] } = {},
  ): Promise<WriteResult<R>> {
    return await this.#actions.insert<R>({
      table: this.table,
      values: values as Row | Row[],
      returning: opts.returning,
    });
  }
  update(set: Partial<R>): WriteBuilder<R> {
    return new WriteBuilder<R>((where, all, returning) =>
      this.#actions.update<R>({ table: this.table, set: set as Row, where, all: all || undefined, returning }),
    );
  }
  delete(): WriteBuilder<R> {
    return new WriteBuilder<R>((where, all, returning) =>
      this.#actions.delete<R>({ table: this.table, where, all: all || undefined, returning }),
    );
  }
  /** COUNT/SUM/AVG/MIN/MAX, grouped. */
  async aggregate(
    aggregates: Aggregate[],
    opts: { groupBy?: string[]; where?: Where; having?: Where; orderBy?: OrderBy; limit?: number } = {},
  ) {
    return (await this.#actions.aggregate({ table: this.table, aggregates, ...opts })).rows;
  }
}
