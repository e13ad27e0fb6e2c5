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
