// rawSQL is parsed (libpg-query, PostgreSQL's own parser) before it runs, and refused unless each statement is of an
// allowed kind touching only the project's own schema (a script of several statements is checked statement by
// statement exactly as each would be alone, and runs as one transaction: see actions.ts). This is a second wall: the statement runs
// as the project's own role in the project's own database, which reaches nothing else anyway (DESIGN §6). What
// would run SQL text the guard never saw is refused wherever it appears: the catalog functions that execute a
// query given as text (ts_stat, ts_rewrite's query form, query_to_xml and kin, ...) and every dynamic form of
// PL/pgSQL (EXECUTE, RETURN QUERY EXECUTE, FOR ... IN EXECUTE, OPEN ... FOR EXECUTE).
import { AppError, errors } from '../../../platform/errors.ts';

// PostgreSQL's parser compiled to WebAssembly: ~14 MB resident once instantiated, so it is loaded on the first
// rawSQL call (or SQL function definition) instead of with the process; most processes never parse SQL.
let pgQuery: Promise<typeof import('libpg-query')> | undefined;
const loadParser = () => (pgQuery ??= import('libpg-query'));
const parse = async (sql: string) => await (await loadParser()).parse(sql);
const parsePlPgSQL = async (sql: string) => await (await loadParser()).parsePlPgSQL(sql);

/** Statement kinds a project may run: queries, writes and DDL on its own objects. */
const ALLOWED_STATEMENTS = new Set([
  'SelectStmt',
  'InsertStmt',
  'UpdateStmt',
  'DeleteStmt',
  'MergeStmt',
  'CreateStmt',
  'CreateTableAsStmt',
  'AlterTableStmt',
  'DropStmt',
  'IndexStmt',
  'ViewStmt',
  'RenameStmt',
  'CreateSeqStmt',
  'AlterSeqStmt',
  'TruncateStmt',
  'CommentStmt',
  'RefreshMatViewStmt',
  'CreatePolicyStmt',
  'AlterPolicyStmt',
  'CreateEnumStmt',
  'AlterEnumStmt',
  'CompositeTypeStmt',
  'CreateDomainStmt',
  'CreateFunctionStmt',
  'CreateTrigStmt',
  'ExplainStmt',
  'VariableShowStmt',
  'VacuumStmt',
]);

/** Statements whose success may change the tables of the schema. */
const DDL = new Set([
  'CreateStmt',
  'CreateTableAsStmt',
  'AlterTableStmt',
  'DropStmt',
  'RenameStmt',
  'ViewStmt',
  'IndexStmt',
  'TruncateStmt',
  'CreateTrigStmt',
  'CreatePolicyStmt',
  'AlterPolicyStmt',
]);

/** Kinds of object DROP may remove. */
const DROPPABLE = new Set([
  'OBJECT_TABLE',
  'OBJECT_INDEX',
  'OBJECT_VIEW',
  'OBJECT_MATVIEW',
  'OBJECT_SEQUENCE',
  'OBJECT_TYPE',
  'OBJECT_DOMAIN',
  'OBJECT_FUNCTION',
  'OBJECT_TRIGGER',
  'OBJECT_POLICY',
  'OBJECT_FOREIGN_TABLE',
]);

/** Node kinds refused wherever they appear (e.g. inside a function's options or a CTE). */
const REFUSED_NODES: Record<string, string> = {
  VariableSetStmt: 'SET and RESET are not allowed (role, search_path and session settings are fixed)',
  CopyStmt: 'COPY is not allowed',
  DoStmt: 'DO blocks are not allowed',
  LoadStmt: 'LOAD is not allowed',
  GrantRoleStmt: 'role membership cannot be changed',
};

/**
 * Functions that read the server's files, run programs, reach other databases, change settings or run SQL text, or
 * tell about the rest of the server: other databases' locks and backends (pg_lock_status, the function behind the
 * pg_locks view, and the blocking-pid functions), whether any role or object exists (pg_input_is_valid /
 * pg_input_error_info with a reg* type name as text), other databases' sizes, and other sessions' transaction ids.
 */
const REFUSED_FUNCTION =
  /^(ts_stat|ts_rewrite|pg_read_file|pg_read_binary_file|pg_ls_\w+|pg_stat_file|pg_file_\w+|pg_logdir_ls|lo_\w+|loread|lowrite|dblink\w*|set_config|pg_notify|pg_advisory\w*|pg_try_advisory\w*|pg_terminate_backend|pg_cancel_backend|pg_reload_conf|pg_rotate_logfile|pg_switch_wal|pg_create_\w+|pg_drop_\w+|pg_replication_\w+|pg_logical_\w+|pg_promote|pg_stat_\w+|pg_backup_\w+|pg_import_system_collations|query_to_xml\w*|cursor_to_xml\w*|table_to_xml\w*|schema_to_xml\w*|database_to_xml\w*|query_to_json\w*|to_reg\w+|has_\w+_privilege|pg_has_role|pg_get_\w+|current_setting_reset|pg_current_logfile|pg_nextoid|binary_upgrade_\w+|pg_sequence_last_value|pg_tablespace_\w+|pg_describe_object|pg_identify_object\w*|row_security_active|pg_catalog|pg_settings_\w+|pg_lock_status|pg_blocking_pids|pg_safe_snapshot_blocking_pids|pg_isolation_test_session_is_blocked|pg_input_is_valid|pg_input_error_info|pg_database_size|pg_current_snapshot|txid_current_snapshot|pg_snapshot_\w+|txid_snapshot_\w+)$/i;

/** Types that turn strings into catalog lookups (and so reveal other schemas' objects). */
const REFUSED_TYPES = /^(reg\w+)$/i;

/** Fields whose node is stored without its type's wrapper key. */
const TYPED_FIELDS: Record<string, string> = {
  relation: 'RangeVar',
  rel: 'RangeVar',
  typevar: 'RangeVar',
  view: 'RangeVar',
  sequence: 'RangeVar',
  table: 'RangeVar',
  typeName: 'TypeName',
  returnType: 'TypeName',
  ofTypename: 'TypeName',
  argType: 'TypeName',
  into: 'IntoClause',
};

const TRUSTED_LANGUAGES = new Set(['sql', 'plpgsql']);

/**
 * `statement`: the kind of statement; `ddl`: it may change the schema's tables; `transactional`: it may run inside
 * a transaction (VACUUM and CREATE INDEX CONCURRENTLY may not).
 */
export type GuardResult = { statement: string; ddl: boolean; transactional: boolean };

/** One statement of a script: its text, where it starts (character offset and 1-based line), and its check. */
export type ScriptStatement = GuardResult & { sql: string; offset: number; line: number };

/** Most statements one script may hold. */
export const MAX_SCRIPT_STATEMENTS = 1000;

type Json = Record<string, unknown>;

function refuse(reason: string): never {
  throw new AppError('FORBIDDEN', `rawSQL refused: ${reason}`, { reason });
}

function strings(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((n) => ((n as Json)?.String as { sval?: string } | undefined)?.sval ?? '').filter(Boolean);
}

/** The qualified name held by a List, ObjectWithArgs, TypeName or a bare list of String nodes. */
function namesOf(o: unknown): string[] {
  if (Array.isArray(o)) return strings(o);
  const obj = (o ?? {}) as Json;
  if (obj.List) return strings((obj.List as Json).items);
  if (obj.ObjectWithArgs) return strings((obj.ObjectWithArgs as Json).objname);
  if (obj.TypeName) return strings((obj.TypeName as Json).names);
  if (obj.names) return strings(obj.names);
  return [];
}

/** Checks one parsed tree; `schema` is the project's schema. */
async function checkTree(tree: unknown, schema: string, source: string): Promise<void> {
  const pending: Promise<void>[] = [];
  const checkQualified = (names: string[], what: string, allowCatalog = false, allowBuiltins = false) => {
    if (names.length < 2) return;
    const ns = names[names.length - 2]!.toLowerCase();
    if (ns === schema) return;
    if (allowCatalog && (ns === 'pg_catalog' || ns === 'information_schema')) return;
    // The built-ins a role may call unqualified anyway (the parser itself writes `extract(...)`, `overlay(...)`,
    // `normalize(...)` as pg_catalog.*): qualifying them reaches nothing more. The refused list below still applies.
    if (allowBuiltins && ns === 'pg_catalog') return;
    refuse(`${what} "${names.join('.')}" is outside the project's schema`);
  };
  const visit = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) {
      for (const n of node) visit(n);
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const obj = node as Json;
    if (key && key in REFUSED_NODES) refuse(REFUSED_NODES[key]!);
    switch (key) {
      case 'RangeVar': {
        const ns = typeof obj.schemaname === 'string' ? obj.schemaname.toLowerCase() : undefined;
        const rel = typeof obj.relname === 'string' ? obj.relname.toLowerCase() : '';
        if (typeof obj.catalogname === 'string') refuse(`"${obj.catalogname}" names another database`);
        if (ns && ns !== schema && ns !== 'information_schema')
          refuse(`table "${ns}.${rel}" is outside the project's schema`);
        if (!ns && rel.startsWith('pg_'))
          refuse(`system catalog "${rel}" is not available; read information_schema instead`);
        if (obj.relpersistence === 't') refuse('temporary tables are not allowed');
        break;
      }
      case 'FuncCall': {
        const names = strings(obj.funcname);
        checkQualified(names, 'function', false, true);
        const fn = names[names.length - 1] ?? '';
        if (REFUSED_FUNCTION.test(fn)) refuse(`function ${fn}() is not allowed`);
        break;
      }
      case 'TypeName': {
        const names = strings(obj.names);
        checkQualified(names, 'type', true);
        const tn = names[names.length - 1] ?? '';
        if (REFUSED_TYPES.test(tn)) refuse(`type ${tn} is not allowed`);
        break;
      }
      case 'ColumnRef': {
        const names = strings(obj.fields);
        if (names.length >= 3 && names[0]!.toLowerCase() !== schema)
          refuse(`"${names.join('.')}" is outside the project's schema`);
        break;
      }
      case 'DropStmt': {
        const type = String(obj.removeType);
        if (!DROPPABLE.has(type)) refuse(`DROP ${type.replace('OBJECT_', '')} is not allowed`);
        for (const o of (obj.objects as unknown[]) ?? []) {
          const names = namesOf(o);
          // DROP TRIGGER / POLICY name the table, then the trigger or policy.
          checkQualified(type === 'OBJECT_TRIGGER' || type === 'OBJECT_POLICY' ? names.slice(0, -1) : names, 'object');
        }
        break;
      }
      case 'CommentStmt':
      case 'RenameStmt':
      case 'AlterEnumStmt':
      case 'CreateEnumStmt':
      case 'CreateDomainStmt':
        for (const field of ['object', 'typeName', 'domainname']) {
          if (obj[field] === undefined) continue;
          const names = namesOf(obj[field]);
          const nested = ['OBJECT_COLUMN', 'OBJECT_TRIGGER', 'OBJECT_POLICY', 'OBJECT_TABCONSTRAINT'].includes(
            String(obj.objtype),
          );
          checkQualified(nested ? names.slice(0, -1) : names, 'object');
        }
        if (
          key === 'RenameStmt' &&
          ![
            'OBJECT_TABLE',
            'OBJECT_COLUMN',
            'OBJECT_INDEX',
            'OBJECT_VIEW',
            'OBJECT_MATVIEW',
            'OBJECT_SEQUENCE',
            'OBJECT_TABCONSTRAINT',
            'OBJECT_TRIGGER',
            'OBJECT_POLICY',
            'OBJECT_TYPE',
            'OBJECT_ATTRIBUTE',
            'OBJECT_FUNCTION',
            'OBJECT_DOMAIN',
          ].includes(String(obj.renameType))
        ) {
          refuse(`renaming ${String(obj.renameType).replace('OBJECT_', '')} is not allowed`);
        }
        break;
      case 'CreateFunctionStmt':
        checkQualified(strings(obj.funcname), 'function');
        pending.push(checkFunction(obj, schema, source));
        break;
      case 'CreateTrigStmt':
        checkQualified(strings(obj.funcname), 'function');
        break;
      case 'AlterTableCmd':
        if (obj.subtype === 'AT_ChangeOwner') refuse('ownership cannot be changed');
        if (obj.subtype === 'AT_SetTableSpace') refuse('tablespaces cannot be changed');
        break;
      case 'AlterTableStmt':
        if (
          obj.objtype &&
          ![
            'OBJECT_TABLE',
            'OBJECT_INDEX',
            'OBJECT_VIEW',
            'OBJECT_MATVIEW',
            'OBJECT_SEQUENCE',
            'OBJECT_FOREIGN_TABLE',
          ].includes(String(obj.objtype))
        ) {
          refuse(`ALTER ${String(obj.objtype).replace('OBJECT_', '')} is not allowed`);
        }
        break;
      case 'CreateStmt':
      case 'IndexStmt':
        if (typeof obj.tablespacename === 'string') refuse('tablespaces are not allowed');
        break;
      case 'IntoClause':
        if (typeof obj.tableSpaceName === 'string') refuse('tablespaces are not allowed');
        break;
    }
    for (const [k, v] of Object.entries(obj)) {
      if (k === 'location' || k === 'stmt_location' || k === 'stmt_len') continue;
      visit(v, /^[A-Z]/.test(k) ? k : TYPED_FIELDS[k]);
    }
  };
  visit(tree);
  await Promise.all(pending);
}

/** CREATE FUNCTION: trusted languages only, no SET options, and the body passes the same checks. */
async function checkFunction(fn: Json, schema: string, source: string): Promise<void> {
  let language = '';
  let body: string | undefined;
  for (const o of (fn.options as unknown[]) ?? []) {
    const d = (o as Json).DefElem as Json | undefined;
    if (!d) continue;
    if (d.defname === 'language') language = String(((d.arg as Json)?.String as Json)?.sval ?? '').toLowerCase();
    if (d.defname === 'as') body = strings(((d.arg as Json)?.List as Json)?.items)[0];
  }
  if (!TRUSTED_LANGUAGES.has(language))
    refuse(`functions in language "${language || '(none)'}" are not allowed; use sql or plpgsql`);
  if (body === undefined) return; // SQL-standard body (BEGIN ATOMIC): already part of the checked tree
  if (language === 'sql') {
    const tree = await parse(body).catch((err: Error) => refuse(`the function body does not parse: ${err.message}`));
    await checkStatements(tree, schema, body);
    return;
  }
  const pl = await parsePlPgSQL(source).catch((err: Error) =>
    refuse(`the function body does not parse: ${err.message}`),
  );
  const queries: string[] = [];
  const visit = (node: unknown, key?: string): void => {
    if (Array.isArray(node)) return node.forEach((n) => visit(n));
    if (node === null || typeof node !== 'object') return;
    if (key === 'PLpgSQL_stmt_dynexecute' || key === 'PLpgSQL_stmt_dynfors')
      refuse('dynamic SQL (EXECUTE) is not allowed in functions');
    if (key === 'PLpgSQL_stmt_open' && (node as Json).dynquery)
      refuse('dynamic SQL (OPEN ... EXECUTE) is not allowed in functions');
    if (key === 'PLpgSQL_stmt_return_query' && (node as Json).dynquery)
      refuse('dynamic SQL (RETURN QUERY EXECUTE) is not allowed in functions');
    if (key === 'PLpgSQL_expr') {
      const q = String((node as Json).query ?? '');
      const mode = Number((node as Json).parseMode ?? 0);
      // 0: a whole statement; otherwise an expression, or an assignment `target := expression`.
      if (mode === 0) queries.push(q);
      else queries.push(`select ${mode === 3 || mode === 4 ? q.replace(/^[^:=]*:?=/, '') : q}`);
    }
    for (const [k, v] of Object.entries(node as Json)) visit(v, /^[A-Z]/.test(k) ? k : undefined);
  };
  visit(pl);
  for (const q of queries) {
    const tree = await parse(q).catch((err: Error) =>
      refuse(`a statement of the function does not parse: ${err.message}`),
    );
    await checkStatements(tree, schema, q);
  }
}

/** Checks every statement of a parsed tree (a function's body). */
async function checkStatements(tree: unknown, schema: string, source: string): Promise<GuardResult> {
  const stmts = ((tree as Json).stmts as Json[] | undefined) ?? [];
  if (stmts.length === 0) throw errors.validation('sql', 'expected one SQL statement');
  let first = '';
  let transactional = true;
  for (const s of stmts) {
    const one = await checkStatement(s, schema, source);
    first ||= one.statement;
    transactional &&= one.transactional;
  }
  return { statement: first, ddl: DDL.has(first), transactional };
}

/** Checks one parsed statement (`{stmt, stmt_location?, stmt_len?}`). */
async function checkStatement(s: Json, schema: string, source: string): Promise<GuardResult> {
  const stmt = s.stmt as Json;
  const kind = Object.keys(stmt)[0]!;
  const transactional = !(
    kind === 'VacuumStmt' ||
    (kind === 'IndexStmt' && (stmt.IndexStmt as Json).concurrent === true)
  );
  if (!ALLOWED_STATEMENTS.has(kind)) refuse(`${kind.replace(/Stmt$/, '')} statements are not allowed`);
  if (kind === 'ExplainStmt') {
    const inner = ((stmt.ExplainStmt as Json).query as Json) ?? {};
    const innerKind = Object.keys(inner)[0] ?? '';
    if (!ALLOWED_STATEMENTS.has(innerKind)) refuse(`EXPLAIN of ${innerKind} is not allowed`);
  }
  await checkTree(stmt, schema, source);
  return { statement: kind, ddl: DDL.has(kind), transactional };
}

async function parseSql(sql: unknown): Promise<{ tree: unknown; sql: string }> {
  if (typeof sql !== 'string' || sql.trim() === '') throw errors.validation('sql', 'expected a SQL statement');
  if (sql.length > 1_000_000) throw errors.validation('sql', 'at most 1000000 characters');
  try {
    return { tree: await parse(sql), sql };
  } catch (err) {
    throw errors.badRequest(`sql: ${(err as Error).message}`, { field: 'sql' });
  }
}

/**
 * Parses `sql` and splits it into its statements, each checked exactly as checkRawSql checks a single one; a refusal
 * names the statement (1-based) and its line. One statement gives a script of one.
 */
export async function checkSqlScript(sql: unknown, schema: string): Promise<ScriptStatement[]> {
  const parsed = await parseSql(sql);
  const stmts = ((parsed.tree as Json).stmts as Json[] | undefined) ?? [];
  if (stmts.length === 0) throw errors.validation('sql', 'expected at least one SQL statement');
  if (stmts.length > MAX_SCRIPT_STATEMENTS)
    throw errors.validation('sql', `at most ${MAX_SCRIPT_STATEMENTS} statements in one script`);
  // libpg-query reports locations in bytes of the UTF-8 text.
  const bytes = Buffer.from(parsed.sql, 'utf8');
  const out: ScriptStatement[] = [];
  for (const [i, s] of stmts.entries()) {
    const start = Number(s.stmt_location ?? 0);
    const len = s.stmt_len === undefined || Number(s.stmt_len) === 0 ? bytes.length - start : Number(s.stmt_len);
    const text = bytes.subarray(start, start + len).toString('utf8');
    const before = bytes.subarray(0, start).toString('utf8');
    const lead = /^\s*/.exec(text)![0];
    const offset = before.length + lead.length;
    const line = (parsed.sql.slice(0, offset).match(/\n/g)?.length ?? 0) + 1;
    try {
      const checked = await checkStatement(s, schema.toLowerCase(), parsed.sql);
      out.push({ ...checked, sql: text.trim(), offset, line });
    } catch (err) {
      if (stmts.length > 1 && err instanceof AppError)
        throw new AppError(err.code, `statement ${i + 1} (line ${line}): ${err.message}`, {
          ...err.details,
          statement: i,
          line,
        });
      throw err;
    }
  }
  return out;
}
