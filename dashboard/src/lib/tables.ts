// What the database pages read about tables, through the data API's rawSQL (one parameterized statement as the
// project's role; identifiers are bound as parameters or quoted).
// A relative path (not the @tessera/client alias) so the unit tests, type-checked with the root tsconfig, resolve it too.
import type { TesseraClient } from '../../../packages/client/src/index.ts';
import { ident } from './format.ts';

export type TableInfo = { name: string; columns: number };
export type Column = { name: string; type: string; nullable: boolean; default: string | null; pk: boolean };

// rawSQL reads information_schema only (the system catalogs are refused to projects), so these queries do too.

export async function listTables(api: TesseraClient): Promise<TableInfo[]> {
  const r = await api.data.sql(
    `select t.table_name as name, (select count(*) from information_schema.columns c where c.table_schema = t.table_schema and c.table_name = t.table_name)::int as columns
       from information_schema.tables t
      where t.table_schema = current_schema() and t.table_type = 'BASE TABLE' order by 1`,
  );
  return r.rows.map((x) => ({ name: String(x.name), columns: Number(x.columns) }));
}

export async function listColumns(api: TesseraClient, table: string): Promise<Column[]> {
  const r = await api.data.sql(
    `select c.column_name as name,
            case when c.data_type = 'ARRAY' then substr(c.udt_name, 2) || '[]' when c.data_type = 'USER-DEFINED' then c.udt_name else c.data_type end as type,
            c.is_nullable = 'YES' as nullable, c.column_default as "default",
            exists (select 1 from information_schema.table_constraints tc join information_schema.key_column_usage k
                      on k.constraint_name = tc.constraint_name and k.table_schema = tc.table_schema and k.table_name = tc.table_name
                     where tc.constraint_type = 'PRIMARY KEY' and tc.table_schema = c.table_schema and tc.table_name = c.table_name and k.column_name = c.column_name) as pk
       from information_schema.columns c
      where c.table_schema = current_schema() and c.table_name = $1
      order by c.ordinal_position`,
    [table],
  );
  return r.rows.map((x) => ({
    name: String(x.name),
    type: String(x.type),
    nullable: x.nullable === true,
    default: (x.default as string | null) ?? null,
    pk: x.pk === true,
  }));
}

/** A typed value from what was typed in a cell ('NULL' is null; numbers, booleans and JSON by the column's type). */
export function parseCell(text: string, type: string): unknown {
  if (text === 'NULL') return null;
  const t = type.toLowerCase();
  if (/^(smallint|integer|bigint|numeric|real|double precision|decimal)/.test(t)) {
    const n = Number(text);
    if (text.trim() === '' || Number.isNaN(n)) throw new Error(`"${text}" is not a number`);
    // bigint and numeric keep their text: JSON numbers would lose digits
    return /^(bigint|numeric|decimal)/.test(t) ? text.trim() : n;
  }
  if (t === 'boolean') {
    if (!['true', 'false'].includes(text.trim().toLowerCase())) throw new Error(`"${text}" is not true or false`);
    return text.trim().toLowerCase() === 'true';
  }
  if (t === 'json' || t === 'jsonb' || t.endsWith('[]')) return JSON.parse(text);
  return text;
}

export const COLUMN_TYPES = [
  'text',
  'integer',
  'bigint',
  'serial',
  'bigserial',
  'numeric',
  'double precision',
  'boolean',
  'uuid',
  'timestamptz',
  'date',
  'jsonb',
  'text[]',
];

export type NewColumn = {
  name: string;
  type: string;
  nullable: boolean;
  default: string;
  pk: boolean;
  unique: boolean;
};

/** The statements of the create-table form (rawSQL runs one statement a call). */
export function createTableSql(name: string, columns: NewColumn[], rls: boolean): string[] {
  const cols = columns
    .filter((c) => c.name.trim())
    .map((c) => {
      const parts = [ident(c.name.trim()), COLUMN_TYPES.includes(c.type) ? c.type : 'text'];
      if (!c.nullable && !c.pk) parts.push('not null');
      if (c.unique && !c.pk) parts.push('unique');
      if (c.default.trim()) parts.push(`default ${c.default.trim()}`);
      return parts.join(' ');
    });
  const pk = columns.filter((c) => c.pk && c.name.trim()).map((c) => ident(c.name.trim()));
  if (pk.length) cols.push(`primary key (${pk.join(', ')})`);
  const create = `create table ${ident(name.trim())} (\n  ${cols.join(',\n  ')}\n)`;
  return rls ? [create, `alter table ${ident(name.trim())} enable row level security`] : [create];
}

// --- the column editor's statements (run as one rawSQL script: one transaction) -------------------------------------
// Names are always quoted with ident(); types come from COLUMN_TYPES only (anything else is refused, so a type field
// cannot carry SQL); defaults and USING expressions are SQL on purpose, shown before they run.

/** A column type the editor offers, or an error naming the offered ones. */
function columnType(type: string): string {
  if (!COLUMN_TYPES.includes(type))
    throw new Error(`"${type}" is not one of the offered types: ${COLUMN_TYPES.join(', ')}`);
  return type;
}

/** A name typed into a form: trimmed, and not empty. */
function named(name: string, what: string): string {
  const n = name.trim();
  if (!n) throw new Error(`${what} is required`);
  return n;
}

export type NewTableColumn = { name: string; type: string; nullable: boolean; default: string };

/** `alter table … add column …`. */
export function addColumnSql(table: string, c: NewTableColumn): string {
  const parts = [
    `alter table ${ident(table)} add column ${ident(named(c.name, 'The column name'))} ${columnType(c.type)}`,
  ];
  if (!c.nullable) parts.push('not null');
  if (c.default.trim()) parts.push(`default ${c.default.trim()}`);
  return parts.join(' ');
}

/** `alter table … rename column … to …`. */
export function renameColumnSql(table: string, from: string, to: string): string {
  return `alter table ${ident(table)} rename column ${ident(from)} to ${ident(named(to, 'The new name'))}`;
}

/** `alter table … drop column …`. */
export function dropColumnSql(table: string, column: string): string {
  return `alter table ${ident(table)} drop column ${ident(column)}`;
}

/** `alter table … alter column … type … [using (…)]`: the USING expression converts what a plain cast cannot. */
export function retypeColumnSql(table: string, column: string, type: string, using: string): string {
  const u = using.trim();
  return `alter table ${ident(table)} alter column ${ident(column)} type ${columnType(type)}${u ? ` using (${u})` : ''}`;
}

/** `drop table …`. */
export function dropTableSql(table: string): string {
  return `drop table ${ident(table)}`;
}

/** The exact number of rows (an aggregate through the data API: no SQL). */
export async function countRows(api: TesseraClient, table: string): Promise<number> {
  const r = await api.data.aggregate<{ n: number | string }>({ table, aggregates: [{ fn: 'count', as: 'n' }] });
  return Number(r.rows[0]?.n ?? 0);
}

// --- row level security policies ---------------------------------------------------------------------------------

export const POLICY_COMMANDS = ['ALL', 'SELECT', 'INSERT', 'UPDATE', 'DELETE'] as const;
export type PolicyCommand = (typeof POLICY_COMMANDS)[number];
/**
 * The roles a policy form offers, as SQL role specifications (never quoted: quoted, they would name roles called
 * "public" or "current_user"). End-users and publishable-key visitors are told apart inside the expressions by
 * `current_setting('request.role', true)` ('authenticated' or 'anon'): their database roles have per-project names
 * (docs/architecture.md, "How a policy names the roles").
 */
export const POLICY_ROLES = ['public', 'current_user'] as const;

export type PolicyDraft = {
  name: string;
  command: PolicyCommand;
  /** Roles of POLICY_ROLES; null keeps an existing policy's roles as they are. */
  roles: string[] | null;
  permissive: boolean;
  using: string;
  withCheck: string;
};

/** Whether a command takes a USING expression (rows it reads) and a WITH CHECK one (rows it writes). */
export function policyClauses(command: PolicyCommand): { using: boolean; withCheck: boolean } {
  return { using: command !== 'INSERT', withCheck: command !== 'SELECT' && command !== 'DELETE' };
}

function rolesSql(roles: string[]): string {
  if (roles.length === 0) throw new Error('Choose at least one role');
  for (const r of roles)
    if (!(POLICY_ROLES as readonly string[]).includes(r))
      throw new Error(`"${r}" is not one of ${POLICY_ROLES.join(', ')}`);
  return roles.join(', ');
}

/** `create policy …` (the expressions are SQL on purpose; the names are quoted). */
export function createPolicySql(table: string, p: PolicyDraft): string {
  const has = policyClauses(p.command);
  let sql = `create policy ${ident(named(p.name, 'The policy name'))} on ${ident(table)}\n  as ${p.permissive ? 'permissive' : 'restrictive'} for ${p.command.toLowerCase()}`;
  if (p.roles) sql += ` to ${rolesSql(p.roles)}`;
  if (has.using && p.using.trim()) sql += `\n  using (${p.using.trim()})`;
  if (has.withCheck && p.withCheck.trim()) sql += `\n  with check (${p.withCheck.trim()})`;
  if (!(has.using && p.using.trim()) && !(has.withCheck && p.withCheck.trim()))
    throw new Error(
      has.using ? 'Write a USING expression (true lets every row through)' : 'Write a WITH CHECK expression',
    );
  return sql;
}

/** `drop policy …`. */
export function dropPolicySql(table: string, name: string): string {
  return `drop policy ${ident(name)} on ${ident(table)}`;
}

/**
 * The statements that turn policy `was` into `now`: ALTER POLICY when only its roles, expressions or name change;
 * DROP and CREATE (in the same transaction) when its command or permissive/restrictive kind changes, or an
 * expression is removed (ALTER POLICY cannot do those).
 */
export function editPolicySql(table: string, was: PolicyDraft, now: PolicyDraft): string[] {
  const has = policyClauses(now.command);
  const using = has.using ? now.using.trim() : '';
  const check = has.withCheck ? now.withCheck.trim() : '';
  const removed = (was.using.trim() && !using) || (was.withCheck.trim() && !check);
  if (was.command !== now.command || was.permissive !== now.permissive || removed)
    return [dropPolicySql(table, was.name), createPolicySql(table, now)];
  const name = named(now.name, 'The policy name');
  const out: string[] = [];
  const parts: string[] = [];
  if (now.roles && JSON.stringify(now.roles) !== JSON.stringify(was.roles)) parts.push(`to ${rolesSql(now.roles)}`);
  if (using !== was.using.trim()) parts.push(`using (${using})`);
  if (check !== was.withCheck.trim()) parts.push(`with check (${check})`);
  if (parts.length) out.push(`alter policy ${ident(was.name)} on ${ident(table)}\n  ${parts.join('\n  ')}`);
  if (name !== was.name) out.push(`alter policy ${ident(was.name)} on ${ident(table)} rename to ${ident(name)}`);
  if (out.length === 0) throw new Error('Nothing has changed');
  return out;
}

/** `alter table … enable row level security`. */
export function enableRlsSql(table: string): string {
  return `alter table ${ident(table)} enable row level security`;
}
