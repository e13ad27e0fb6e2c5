// The project's schema as the platform reads it on the project's behalf: tables (columns, keys, indexes, triggers,
// row-level-security policies), views, functions and grants, and the same as a runnable SQL script (`db dump`).
//
// The project's own role may not read pg_catalog through rawSQL (the guard refuses it); the platform reads it here with
// the project's own connection, in the project's own database (DESIGN §6), and every query is filtered to the
// project's schema: nothing of the platform's schemas (extensions, tessera_*) or of any other project can appear.
// Names are answered unqualified (the project's schema is its search path), so a dump runs unchanged on another
// project. Role names are digests that differ per project: they are answered by what they are for (`owner`,
// `authenticated`, `anon`, `public`).
import { ident } from './names.ts';
import type { Db } from './pools.ts';
import type { ProjectRole } from './provisioning.ts';

/** The table that records applied migrations, in the project's own schema (see migrations.ts); never in a dump. */
export const MIGRATIONS_TABLE = 'tessera_migrations';

export type SchemaColumn = {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  primaryKey: boolean;
  /** `serial`/`bigserial`/`smallserial` when the default is the column's own sequence; `always`/`by default` for identity. */
  serial: string | null;
  identity: string | null;
  generated: string | null;
};
export type SchemaForeignKey = {
  name: string;
  columns: string[];
  references: { table: string; columns: string[] };
  onDelete: string;
  definition: string;
};
export type SchemaTable = {
  name: string;
  rlsEnabled: boolean;
  rlsForced: boolean;
  rowEstimate: number | null;
  /** `PARTITION BY` of a partitioned table (`RANGE (at)`); else null. */
  partitionKey: string | null;
  /** The partitioned table a partition belongs to, and its bound (`FOR VALUES FROM (...) TO (...)`); else null. */
  partitionOf: string | null;
  partitionBound: string | null;
  columns: SchemaColumn[];
  primaryKey: string[];
  foreignKeys: SchemaForeignKey[];
  /** Primary key, unique, check and exclusion constraints (foreign keys apart), as `CONSTRAINT` text. */
  constraints: { name: string; type: string; definition: string }[];
  indexes: { name: string; definition: string; unique: boolean; constraint: boolean }[];
  triggers: { name: string; definition: string }[];
  policies: {
    name: string;
    command: string;
    roles: string[];
    permissive: boolean;
    using: string | null;
    withCheck: string | null;
  }[];
};
export type ProjectSchema = {
  tables: SchemaTable[];
  views: { name: string; definition: string; materialized: boolean }[];
  functions: { name: string; arguments: string; definition: string }[];
  enums: { name: string; values: string[] }[];
  sequences: { name: string; definition: string }[];
  grants: { table: string; grantee: string; privileges: string[] }[];
};

const FK_ACTIONS: Record<string, string> = {
  a: 'NO ACTION',
  r: 'RESTRICT',
  c: 'CASCADE',
  n: 'SET NULL',
  d: 'SET DEFAULT',
};
const POLICY_COMMANDS: Record<string, string> = { r: 'SELECT', a: 'INSERT', w: 'UPDATE', d: 'DELETE', '*': 'ALL' };

/** Drops `schema.` before names (pg_get_*def qualify the table and function names they print). */
function unqualify(schema: string, text: string): string {
  const esc = schema.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return text.replace(new RegExp(`(?:"${esc}"|\\b${esc})\\.`, 'g'), '');
}

/** Reads the project's schema through `db` (the project's own connection). */
export async function readProjectSchema(db: Db, role: ProjectRole): Promise<ProjectSchema> {
  const schema = role.schemaName;
  const u = (s: string | null) => (s === null ? null : unqualify(schema, s));
  const roleLabel = (name: string): string =>
    name === role.roleName
      ? 'owner'
      : name === role.userRoleName
        ? 'authenticated'
        : name === role.anonRoleName
          ? 'anon'
          : name;
  const q = async <T>(sql: string): Promise<T[]> => (await db.query<T & Record<string, unknown>>(sql, [schema])).rows;

  const tables = await q<{
    oid: number;
    name: string;
    rls: boolean;
    forced: boolean;
    reltuples: number;
    partkey: string | null;
    parent: string | null;
    bound: string | null;
  }>(
    `select c.oid::int8 as oid, c.relname as name, c.relrowsecurity as rls, c.relforcerowsecurity as forced, c.reltuples::float8 as reltuples,
            case when c.relkind = 'p' then pg_catalog.pg_get_partkeydef(c.oid) end as partkey,
            case when c.relispartition then (select p.relname from pg_catalog.pg_inherits i join pg_catalog.pg_class p on p.oid = i.inhparent
                                              where i.inhrelid = c.oid limit 1) end as parent,
            case when c.relispartition then pg_catalog.pg_get_expr(c.relpartbound, c.oid) end as bound
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'p') and c.relname <> '${MIGRATIONS_TABLE}'
      order by c.relname`,
  );
  const columns = await q<{
    table_name: string;
    name: string;
    type: string;
    not_null: boolean;
    default: string | null;
    identity: string;
    generated: string;
    owned_seq: string | null;
    typname: string;
  }>(
    `select c.relname as table_name, a.attname as name, pg_catalog.format_type(a.atttypid, a.atttypmod) as type,
            a.attnotnull as not_null, pg_catalog.pg_get_expr(d.adbin, d.adrelid) as default, a.attidentity as identity,
            a.attgenerated as generated, t.typname,
            (select s.relname from pg_catalog.pg_depend dep join pg_catalog.pg_class s on s.oid = dep.objid
              where dep.refobjid = c.oid and dep.refobjsubid = a.attnum and dep.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                and s.relkind = 'S' and dep.deptype = 'a' limit 1) as owned_seq
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped
       join pg_catalog.pg_type t on t.oid = a.atttypid
       left join pg_catalog.pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum
      where n.nspname = $1 and c.relkind in ('r', 'p')
      order by c.relname, a.attnum`,
  );
  const constraints = await q<{
    table_name: string;
    name: string;
    type: string;
    definition: string;
    columns: string[];
    ref_table: string | null;
    ref_columns: string[] | null;
    on_delete: string;
  }>(
    `select c.relname as table_name, k.conname as name, k.contype as type, pg_catalog.pg_get_constraintdef(k.oid) as definition,
            array(select a.attname from unnest(k.conkey) with ordinality as x(n, i)
                    join pg_catalog.pg_attribute a on a.attrelid = k.conrelid and a.attnum = x.n order by x.i)::text[] as columns,
            r.relname as ref_table,
            array(select a.attname from unnest(k.confkey) with ordinality as x(n, i)
                    join pg_catalog.pg_attribute a on a.attrelid = k.confrelid and a.attnum = x.n order by x.i)::text[] as ref_columns,
            k.confdeltype as on_delete
       from pg_catalog.pg_constraint k join pg_catalog.pg_class c on c.oid = k.conrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       left join pg_catalog.pg_class r on r.oid = k.confrelid
      where n.nspname = $1 and c.relkind in ('r', 'p') and k.contype in ('p', 'u', 'c', 'f', 'x')
        and k.conparentid = 0 and k.conislocal
      order by c.relname, k.contype <> 'p', k.conname`,
  );
  const indexes = await q<{
    table_name: string;
    name: string;
    definition: string;
    unique: boolean;
    constraint: boolean;
  }>(
    `select c.relname as table_name, i.relname as name, pg_catalog.pg_get_indexdef(x.indexrelid) as definition,
            x.indisunique as unique, exists (select 1 from pg_catalog.pg_constraint k where k.conindid = x.indexrelid) as constraint
       from pg_catalog.pg_index x join pg_catalog.pg_class c on c.oid = x.indrelid
       join pg_catalog.pg_class i on i.oid = x.indexrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('r', 'p')
        and not exists (select 1 from pg_catalog.pg_inherits h where h.inhrelid = x.indexrelid)
      order by c.relname, i.relname`,
  );
  // The realtime switch's trigger is the platform's (it follows the publication), not the project's.
  const triggers = await q<{ table_name: string; name: string; definition: string }>(
    `select c.relname as table_name, t.tgname as name, pg_catalog.pg_get_triggerdef(t.oid) as definition
       from pg_catalog.pg_trigger t join pg_catalog.pg_class c on c.oid = t.tgrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
       join pg_catalog.pg_proc p on p.oid = t.tgfoid join pg_catalog.pg_namespace pn on pn.oid = p.pronamespace
      where n.nspname = $1 and not t.tgisinternal and pn.nspname = $1 and t.tgparentid = 0
      order by c.relname, t.tgname`,
  );
  const policies = await q<{
    table_name: string;
    name: string;
    cmd: string;
    roles: string[];
    permissive: boolean;
    using: string | null;
    with_check: string | null;
  }>(
    `select c.relname as table_name, p.polname as name, p.polcmd as cmd, p.polpermissive as permissive,
            array(select case when r = 0 then 'public' else (select rolname from pg_catalog.pg_roles where oid = r) end
                    from unnest(p.polroles) as r)::text[] as roles,
            pg_catalog.pg_get_expr(p.polqual, p.polrelid) as using, pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid) as with_check
       from pg_catalog.pg_policy p join pg_catalog.pg_class c on c.oid = p.polrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1
      order by c.relname, p.polname`,
  );
  const views = await q<{ oid: string; name: string; definition: string; materialized: boolean }>(
    `select c.oid::int8 as oid, c.relname as name, pg_catalog.pg_get_viewdef(c.oid, true) as definition, c.relkind = 'm' as materialized
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1 and c.relkind in ('v', 'm')
      order by c.oid`,
  );
  // Functions of extensions installed in the schema are the extension's, not the project's.
  const functions = await q<{ oid: string; name: string; arguments: string; definition: string }>(
    `select p.oid::int8 as oid, p.proname as name, pg_catalog.pg_get_function_identity_arguments(p.oid) as arguments,
            pg_catalog.pg_get_functiondef(p.oid) as definition
       from pg_catalog.pg_proc p join pg_catalog.pg_namespace n on n.oid = p.pronamespace
      where n.nspname = $1 and p.prokind in ('f', 'p')
        and not exists (select 1 from pg_catalog.pg_depend d where d.objid = p.oid and d.deptype = 'e')
      order by p.oid`,
  );
  const enums = await q<{ name: string; values: string[] }>(
    `select t.typname as name, array(select e.enumlabel from pg_catalog.pg_enum e where e.enumtypid = t.oid order by e.enumsortorder)::text[] as values
       from pg_catalog.pg_type t join pg_catalog.pg_namespace n on n.oid = t.typnamespace
      where n.nspname = $1 and t.typtype = 'e'
      order by t.oid`,
  );
  // Sequences a serial or identity column owns come with their column; the others are the project's own.
  const sequences = await q<{
    name: string;
    type: string;
    start: string;
    increment: string;
    min: string;
    max: string;
    cache: string;
    cycle: boolean;
  }>(
    `select c.relname as name, pg_catalog.format_type(s.seqtypid, null) as type, s.seqstart::text as start,
            s.seqincrement::text as increment, s.seqmin::text as min, s.seqmax::text as max, s.seqcache::text as cache, s.seqcycle as cycle
       from pg_catalog.pg_sequence s join pg_catalog.pg_class c on c.oid = s.seqrelid
       join pg_catalog.pg_namespace n on n.oid = c.relnamespace
      where n.nspname = $1
        and not exists (select 1 from pg_catalog.pg_depend d where d.objid = c.oid and d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
                         and d.refobjsubid > 0 and d.deptype in ('a', 'i'))
      order by c.relname`,
  );
  const grants = await q<{ table_name: string; grantee: string; privileges: string[] }>(
    `select c.relname as table_name, coalesce(r.rolname, 'public') as grantee,
            array_agg(a.privilege_type order by a.privilege_type)::text[] as privileges
       from pg_catalog.pg_class c join pg_catalog.pg_namespace n on n.oid = c.relnamespace,
            lateral pg_catalog.aclexplode(coalesce(c.relacl, pg_catalog.acldefault('r', c.relowner))) a
       left join pg_catalog.pg_roles r on r.oid = a.grantee
      where n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm') and c.relname <> '${MIGRATIONS_TABLE}'
      group by c.relname, r.rolname
      order by c.relname, grantee`,
  );

  const byTable = <T extends { table_name: string }>(rows: T[]) => {
    const m = new Map<string, T[]>();
    for (const r of rows) m.set(r.table_name, [...(m.get(r.table_name) ?? []), r]);
    return m;
  };
  const cols = byTable(columns);
  const cons = byTable(constraints);
  const idx = byTable(indexes);
  const trg = byTable(triggers);
  const pol = byTable(policies);
  const SERIALS: Record<string, string> = { int4: 'serial', int8: 'bigserial', int2: 'smallserial' };

  const schemaOut: ProjectSchema = {
    tables: tables.map((t) => {
      const tc = cons.get(t.name) ?? [];
      const pk = tc.find((k) => k.type === 'p')?.columns ?? [];
      return {
        name: t.name,
        rlsEnabled: t.rls,
        rlsForced: t.forced,
        rowEstimate: t.reltuples < 0 ? null : Math.round(t.reltuples),
        partitionKey: t.partkey,
        partitionOf: t.parent,
        partitionBound: t.bound,
        columns: (cols.get(t.name) ?? []).map((c) => {
          // A serial column: its default is its own sequence (dumped as `serial`, which makes the same sequence).
          const serial =
            c.owned_seq && !c.identity && c.default?.startsWith('nextval(') && SERIALS[c.typname]
              ? SERIALS[c.typname]!
              : null;
          return {
            name: c.name,
            type: c.type,
            nullable: !c.not_null,
            default: c.generated ? null : u(c.default),
            primaryKey: pk.includes(c.name),
            serial,
            identity: c.identity === 'a' ? 'always' : c.identity === 'd' ? 'by default' : null,
            generated: c.generated === 's' ? u(c.default) : null,
          };
        }),
        primaryKey: pk,
        foreignKeys: tc
          .filter((k) => k.type === 'f')
          .map((k) => ({
            name: k.name,
            columns: k.columns,
            references: { table: k.ref_table ?? '', columns: k.ref_columns ?? [] },
            onDelete: FK_ACTIONS[k.on_delete] ?? 'NO ACTION',
            definition: unqualify(schema, k.definition),
          })),
        constraints: tc
          .filter((k) => k.type !== 'f')
          .map((k) => ({
            name: k.name,
            type: { p: 'primary key', u: 'unique', c: 'check', x: 'exclude' }[k.type] ?? k.type,
            definition: unqualify(schema, k.definition),
          })),
        indexes: (idx.get(t.name) ?? []).map((i) => ({
          name: i.name,
          definition: unqualify(schema, i.definition),
          unique: i.unique,
          constraint: i.constraint,
        })),
        triggers: (trg.get(t.name) ?? []).map((g) => ({ name: g.name, definition: unqualify(schema, g.definition) })),
        policies: (pol.get(t.name) ?? []).map((p) => ({
          name: p.name,
          command: POLICY_COMMANDS[p.cmd] ?? p.cmd,
          roles: p.roles.map(roleLabel),
          permissive: p.permissive,
          using: u(p.using),
          withCheck: u(p.with_check),
        })),
      };
    }),
    views: views.map((v) => ({
      name: v.name,
      definition: unqualify(schema, v.definition),
      materialized: v.materialized,
    })),
    functions: functions.map((f) => ({
      name: f.name,
      arguments: unqualify(schema, f.arguments),
      definition: unqualify(schema, f.definition),
    })),
    enums,
    sequences: sequences.map((s) => ({
      name: s.name,
      definition: `create sequence ${ident(s.name)} as ${s.type} increment by ${s.increment} minvalue ${s.min} maxvalue ${s.max} start with ${s.start} cache ${s.cache}${s.cycle ? ' cycle' : ''}`,
    })),
    grants: grants.map((g) => ({ table: g.table_name, grantee: roleLabel(g.grantee), privileges: g.privileges })),
  };
  // The order the tables, functions and views were made in (object ids grow): a dump makes them in that order, which
  // met their dependencies on each other when they were made. Kept off the JSON answer (not enumerable).
  const order = new Map<string, number>([
    ...tables.map((t) => [`t:${t.name}`, Number(t.oid)] as const),
    ...views.map((v) => [`v:${v.name}`, Number(v.oid)] as const),
    ...functions.map((f) => [`f:${f.name}(${unqualify(schema, f.arguments)})`, Number(f.oid)] as const),
  ]);
  Object.defineProperty(schemaOut, CREATION_ORDER, { value: order, enumerable: false });
  return schemaOut;
}

/** Where readProjectSchema keeps the creation order of tables, functions and views (see schemaToSql). */
const CREATION_ORDER = Symbol('creationOrder');

/** Ends a statement with `;` (definitions printed by the server come without, functions with a trailing newline). */
const stmt = (s: string): string => `${s.trim().replace(/;\s*$/, '')};`;

/**
 * The schema as a script that recreates it on a fresh project through rawSQL (each statement passes the SQL guard):
 * enums and sequences, tables with their columns and constraints, functions, views, foreign keys, indexes,
 * triggers, row level security and its policies. Grants are the platform's (every table's rights for the end-user
 * and anonymous roles come from default privileges; GRANT is not a project's statement): they are listed as comments.
 */
export function schemaToSql(s: ProjectSchema): string {
  const out: string[] = [
    "-- The project's schema, written by Tessera (`tessera db dump --schema`). Runs as one script on a fresh project.",
    '',
  ];
  for (const e of s.enums) out.push(stmt(`create type ${ident(e.name)} as enum (${e.values.map(lit).join(', ')})`));
  for (const q of s.sequences) out.push(stmt(q.definition));
  if (s.enums.length + s.sequences.length > 0) out.push('');
  // Tables, functions and views in the order they were made (else: tables, then functions, then views; partitions
  // after the tables they belong to either way).
  const order = (s as { [CREATION_ORDER]?: Map<string, number> })[CREATION_ORDER];
  type Item = { key: string; rank: number; sql: string[] };
  const items: Item[] = [];
  const tables = [...s.tables.filter((x) => !x.partitionOf), ...s.tables.filter((x) => x.partitionOf)];
  tables.forEach((t, i) => items.push({ key: `t:${t.name}`, rank: i, sql: [tableSql(t)] }));
  s.functions.forEach((f, i) =>
    items.push({ key: `f:${f.name}(${f.arguments})`, rank: 1e6 + i, sql: [stmt(f.definition), ''] }),
  );
  s.views.forEach((v, i) =>
    items.push({
      key: `v:${v.name}`,
      rank: 2e6 + i,
      sql: [stmt(`create ${v.materialized ? 'materialized view' : 'view'} ${ident(v.name)} as\n${v.definition}`)],
    }),
  );
  const rankOf = (it: Item) => (order ? (order.get(it.key) ?? it.rank) : it.rank);
  items.sort((a, b) => rankOf(a) - rankOf(b));
  for (const it of items) out.push(...it.sql);
  if (items.length > 0 && out.at(-1) !== '') out.push('');
  for (const t of s.tables)
    for (const k of t.foreignKeys)
      out.push(stmt(`alter table ${ident(t.name)} add constraint ${ident(k.name)} ${k.definition}`));
  for (const t of s.tables) for (const i of t.indexes) if (!i.constraint) out.push(stmt(i.definition));
  for (const t of s.tables) for (const g of t.triggers) out.push(stmt(g.definition));
  for (const t of s.tables) {
    if (t.rlsEnabled) out.push(stmt(`alter table ${ident(t.name)} enable row level security`));
    if (t.rlsForced) out.push(stmt(`alter table ${ident(t.name)} force row level security`));
    for (const p of t.policies) {
      const roles = p.roles.filter((r) => r !== 'public');
      let line = `create policy ${ident(p.name)} on ${ident(t.name)} as ${p.permissive ? 'permissive' : 'restrictive'} for ${p.command.toLowerCase()}`;
      // The project's roles have other names on another project: `current_user` is the owner's anywhere.
      if (roles.length > 0) line += ` to ${p.roles.map((r) => (r === 'owner' ? 'current_user' : ident(r))).join(', ')}`;
      if (p.using !== null) line += ` using (${p.using})`;
      if (p.withCheck !== null) line += ` with check (${p.withCheck})`;
      out.push(stmt(line));
    }
  }
  const grants = s.grants.filter((g) => g.grantee !== 'owner');
  if (grants.length > 0) {
    out.push('', '-- Grants (made by the platform for every table through default privileges; shown, not run):');
    for (const g of grants)
      out.push(`-- grant ${g.privileges.join(', ').toLowerCase()} on ${ident(g.table)} to ${g.grantee};`);
  }
  return `${out.join('\n').trimEnd()}\n`;
}

const lit = (v: string): string => `'${v.replace(/'/g, "''")}'`;

/** `create table` of one table with its columns and constraints (foreign keys apart), or of a partition. */
function tableSql(t: SchemaTable): string {
  if (t.partitionOf) {
    const own = t.constraints.map((k) => `  constraint ${ident(k.name)} ${k.definition}`);
    return `create table ${ident(t.name)} partition of ${ident(t.partitionOf)}${own.length ? ` (\n${own.join(',\n')}\n)` : ''} ${t.partitionBound ?? 'default'}${t.partitionKey ? ` partition by ${t.partitionKey}` : ''};`;
  }
  const lines = t.columns.map((c) => {
    if (c.serial) return `  ${ident(c.name)} ${c.serial}${c.nullable ? '' : ' not null'}`;
    let line = `  ${ident(c.name)} ${c.type}`;
    if (c.identity) line += ` generated ${c.identity} as identity`;
    else if (c.generated) line += ` generated always as (${c.generated}) stored`;
    // `nextval('seq'::regclass)`: the guard refuses reg* types (catalog lookups); nextval casts its text itself.
    else if (c.default !== null) line += ` default ${c.default.replace(/'((?:[^']|'')+)'::regclass\b/g, "'$1'")}`;
    if (!c.nullable && !c.identity) line += ' not null';
    return line;
  });
  for (const k of t.constraints) lines.push(`  constraint ${ident(k.name)} ${k.definition}`);
  return `create table ${ident(t.name)} (\n${lines.join(',\n')}\n)${t.partitionKey ? ` partition by ${t.partitionKey}` : ''};`;
}
