// `tessera db sql <file|->` (one parameterized statement, or a script of several run as one transaction), `tessera db
// push|pull|dump` (migrations, see ./migration.ts) and `tessera gen types` (TypeScript types of the tables).
import fs from 'node:fs';
import path from 'node:path';
import { arg, flag, json, type Command } from '../command.ts';
import type { Ctx } from '../context.ts';
import { CliError, EXIT, table } from '../output.ts';
import { compare, localMigrations, migrationsDir, refuseChanged, writeMigration } from './migration.ts';

export const db: Command = {
  name: 'db',
  summary:
    "Run SQL on the project's database with the secret key: one statement (with --params), or a whole script as one transaction",
  usage: [
    'db sql <file|-> [--params JSON]',
    'db push [--dry-run] [--workdir DIR]',
    'db pull [name] [--local-only] [--workdir DIR]',
    'db dump --schema [-o FILE]',
  ],
  async run(ctx, args) {
    const sub = args[0];
    if (sub === 'push') return await push(ctx);
    if (sub === 'pull') return await pull(ctx, args[1]);
    if (sub === 'dump') return await dump(ctx);
    if (sub !== 'sql') throw new CliError(sub ? `Unknown: db ${sub}` : 'Missing: db sql <file|-> | push | pull | dump');
    const source = arg(args, 1, 'file or -');
    const sql =
      source === '-' ? await ctx.readStdin() : fs.existsSync(source) ? fs.readFileSync(source, 'utf8') : undefined;
    if (sql === undefined) throw new CliError(`No such file: ${source} (give a file, or - to read stdin)`);
    const params = flag(ctx, 'params') === undefined ? [] : json(flag(ctx, 'params')!, '--params');
    if (!Array.isArray(params)) throw new CliError('--params takes a JSON array');
    const r = await (await ctx.project()).data.sql(sql, params);
    const last =
      r.fields.length > 0
        ? `${table(
            r.rows,
            r.fields.map((f) => f.name),
          )}\n(${r.rows.length} rows)`
        : `OK (${r.rowCount ?? 0} rows)`;
    // A script: what each statement did (psql's command tags), then the last statement's rows.
    const steps =
      (r.statements ?? []).length > 1 ? r.statements.map((s) => `${s.command ?? 'OK'} ${s.rowCount ?? ''}`.trim()) : [];
    ctx.out.result(r, () => [...steps, last].join('\n'));
  },
};

/** Applies the pending migration files in order, each in its own transaction; stops at the first that fails. */
async function push(ctx: Ctx): Promise<void> {
  const dir = migrationsDir(ctx);
  const local = localMigrations(dir);
  const data = (await ctx.project()).data;
  const states = compare(local, await data.migrations());
  refuseChanged(states);
  for (const s of states.filter((x) => x.status === 'remote'))
    ctx.out.note(`Applied on the project but not in ${dir}: ${s.version}_${s.name} (left as it is)`);
  const pending = local.filter((l) => states.some((s) => s.version === l.version && s.status === 'pending'));
  if (ctx.flags['dry-run'] === true) {
    ctx.out.result({ pending: pending.map((p) => ({ version: p.version, name: p.name })) }, () =>
      pending.length === 0
        ? 'Up to date: nothing to push'
        : pending.map((p) => `Would apply ${path.basename(p.file)}`).join('\n'),
    );
    return;
  }
  const applied: { version: string; name: string; applied: boolean }[] = [];
  for (const m of pending) {
    ctx.out.note(`Applying migration ${path.basename(m.file)}...`);
    try {
      const r = await data.applyMigration({ version: m.version, name: m.name, sql: m.sql });
      applied.push({ version: m.version, name: m.name, applied: r.applied });
    } catch (err) {
      const e = err as Error & { status?: number };
      throw new CliError(
        `Migration ${path.basename(m.file)} failed and was rolled back (nothing of it was kept; later migrations were not applied): ${e.message}`,
        e.status === 409 ? EXIT.CONFLICT : e.status === 403 ? EXIT.FORBIDDEN : e.status === 401 ? EXIT.AUTH : EXIT.API,
      );
    }
  }
  ctx.out.result(
    { applied },
    applied.length === 0 ? 'Up to date: nothing to push' : `Applied ${applied.length} migration(s)`,
  );
}

/** Writes the project's schema as a new migration file, recorded as applied (it describes what the project has). */
async function pull(ctx: Ctx, name: string | undefined): Promise<void> {
  const dir = migrationsDir(ctx);
  const data = (await ctx.project()).data;
  const states = compare(localMigrations(dir), await data.migrations());
  const pending = states.filter((s) => s.status === 'pending' || s.status === 'changed');
  if (pending.length > 0)
    throw new CliError(
      `Local migrations not applied yet: ${pending.map((s) => `${s.version}_${s.name}`).join(', ')}. Push them first (tessera db push), then pull.`,
    );
  const sql = await data.schemaSql();
  const made = writeMigration(ctx, name ?? 'remote_schema', sql);
  if (ctx.flags['local-only'] !== true)
    await data.applyMigration({ version: made.version, name: made.name, sql, recordOnly: true });
  ctx.out.result(
    { ...made, recorded: ctx.flags['local-only'] !== true },
    `Wrote ${path.relative(process.cwd(), made.file) || made.file}${ctx.flags['local-only'] === true ? '' : ' (recorded as applied on the project)'}`,
  );
}

/** The project's schema as SQL, to stdout or -o FILE. */
async function dump(ctx: Ctx): Promise<void> {
  if (ctx.flags.schema !== true)
    throw new CliError('db dump writes the schema only: tessera db dump --schema [-o FILE]');
  const sql = await (await ctx.project()).data.schemaSql();
  const output = flag(ctx, 'output');
  if (output) {
    fs.writeFileSync(output, sql);
    ctx.out.result({ output }, `Wrote ${output}`);
  } else if (ctx.out.json) ctx.out.result({ sql }, '');
  else ctx.out.io.stdout(sql);
}

type Column = {
  table_name: string;
  column_name: string;
  udt_name: string;
  data_type: string;
  is_nullable: string;
  column_default: string | null;
  table_type: string;
};

const TYPES: Record<string, string> = {
  int2: 'number',
  int4: 'number',
  float4: 'number',
  float8: 'number',
  oid: 'number',
  int8: 'string',
  numeric: 'string',
  money: 'string',
  bool: 'boolean',
  json: 'Json',
  jsonb: 'Json',
  text: 'string',
  varchar: 'string',
  bpchar: 'string',
  name: 'string',
  uuid: 'string',
  citext: 'string',
  inet: 'string',
  cidr: 'string',
  macaddr: 'string',
  date: 'string',
  time: 'string',
  timetz: 'string',
  timestamp: 'string',
  timestamptz: 'string',
  interval: 'string',
  bytea: 'string',
  vector: 'number[]',
  tsvector: 'string',
};

const ident = (s: string) => (/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(s) ? s : JSON.stringify(s));

/** TypeScript of the project's tables: a `Database` type for `createClient<Database>()`, as `supabase gen types` does. */
export function typesOf(columns: Column[]): string {
  const tables = new Map<string, Column[]>();
  for (const c of columns) tables.set(c.table_name, [...(tables.get(c.table_name) ?? []), c]);
  const tsType = (c: Column): string => {
    const array = c.udt_name.startsWith('_');
    const base = TYPES[array ? c.udt_name.slice(1) : c.udt_name] ?? 'unknown';
    const t = array ? `${base.includes('[') ? `(${base})` : base}[]` : base;
    return c.is_nullable === 'YES' ? `${t} | null` : t;
  };
  const lines = [
    '// Generated by `tessera gen types`: the tables of the project database. Use as createClient<Database>(...).',
    'export type Json = string | number | boolean | null | { [key: string]: Json } | Json[];',
    '',
    'export type Database = {',
  ];
  for (const [name, cols] of [...tables.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    lines.push(`  ${ident(name)}: {`);
    for (const c of cols) lines.push(`    ${ident(c.column_name)}: ${tsType(c)};`);
    lines.push('  };');
  }
  lines.push('};', '');
  lines.push('/** What an insert needs: columns with a default or that take null may be left out. */');
  lines.push('export type Insert = {');
  for (const [name, cols] of [...tables.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    if (cols[0]!.table_type !== 'BASE TABLE') continue;
    lines.push(`  ${ident(name)}: {`);
    for (const c of cols)
      lines.push(
        `    ${ident(c.column_name)}${c.column_default !== null || c.is_nullable === 'YES' ? '?' : ''}: ${tsType(c)};`,
      );
    lines.push('  };');
  }
  lines.push('};', '');
  return lines.join('\n');
}

export const gen: Command = {
  name: 'gen',
  summary: 'Generate TypeScript types of the project tables',
  usage: ['gen types [--output FILE]'],
  async run(ctx, args) {
    if (args[0] !== 'types') throw new CliError(args[0] ? `Unknown: gen ${args[0]}` : 'Missing: gen types');
    const r = await (
      await ctx.project()
    ).data.sql(
      `select c.table_name, c.column_name, c.udt_name, c.data_type, c.is_nullable, c.column_default, t.table_type
         from information_schema.columns c
         join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
        where c.table_schema = current_schema() and t.table_type in ('BASE TABLE', 'VIEW')
        order by c.table_name, c.ordinal_position`,
    );
    const text = typesOf(r.rows as Column[]);
    const output = flag(ctx, 'output');
    if (output) {
      fs.writeFileSync(output, text);
      ctx.out.result(
        { output, tables: new Set((r.rows as Column[]).map((c) => c.table_name)).size },
        `Wrote ${output}`,
      );
    } else if (ctx.out.json) ctx.out.result({ types: text }, '');
    else ctx.out.io.stdout(text);
  },
};
