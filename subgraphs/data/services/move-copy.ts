// The copy engine of an online move: copies ONE project database from its source server to a target server with
// PostgreSQL's own tools, verifies the copy, and cleans up after itself. It switches nothing and drops nothing of the
// source: the caller (the move job) holds the project's writes when asked (`hold`), switches the project's row once
// the copy is verified, drops the source after the switch is committed, and drops the target on a failure.
//
// Steps (docs/architecture.md, "Online moves"):
//   check     tools (`pg_dump`/`pg_restore` at least as new as both servers), extensions the schema uses exist on the
//             target, the target holds nothing of the project yet; then the mode: logical replication where both
//             servers allow it, else dump mode (the reason is reported).
//   schema    `pg_dump --schema-only` of the project's schema, restored as the project's own login role (role names
//             are the same on every server; ownership, grants, default privileges, RLS policies and triggers come
//             along). Logical mode restores it whole; dump mode restores its pre-data part only (tables without
//             indexes, constraints, triggers), the rest after the data.
//   copy      logical: a publication on the source for the schema's tables and `tessera_hooks.outbox`, a subscription
//             on the target with copy_data; waits for every table's initial sync. The project is read and written
//             on its source meanwhile.
//   hold      the caller's `hold()`: once it returns, no write reaches the source.
//   catch-up  logical: waits for the subscription to confirm the source's WAL position taken after the hold.
//             dump: `pg_dump --data-only | pg_restore`, then the post-data part of the schema.
//   sequences logical replication does not carry them: set on the target from the source (dump mode's data has them).
//   verify    the same relations on both sides, and for every table the same row count and order-independent
//             checksum (`sum(hashtextextended(row::text, 0))`); the same sequence positions. Any difference fails.
//   cleanup   the subscription (target), the publication and replication slots (source): on success, failure and
//             abort alike; `cleanupLeftovers` does the same for a move whose process died.
//
// A hostile project (DESIGN §6) must not get the platform role's or a superuser's rights through the copy: the
// dump, the restore and the verification run as the project's login role (`--role`, `set role`), so a CHECK
// constraint, a policy or an index expression calling the project's own function runs with the project's rights;
// and because a PostgreSQL 15 subscription applies changes as its owner (a superuser), logical mode is used only when
// the project's schema defines no function at all (PostgreSQL 16+ applies as the table's owner: no such rule).
// Passwords go to the tools through PGPASSWORD, never on a command line.
import { spawn } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { AppError } from '../../../platform/errors.ts';
import type { Logger } from '../../../platform/logger.ts';
import { pgToolsFor, type PgTools } from '../../../platform/pg-tools.ts';
import { ident, literal } from './names.ts';

export type MoveMode = 'logical' | 'dump';
export type MovePhase = 'check' | 'schema' | 'copy' | 'hold' | 'catch-up' | 'sequences' | 'verify' | 'cleanup';

/** What the engine reports as it goes (`tablesReady`/`tables`: the initial sync of logical mode). */
export type MoveProgress = {
  phase: MovePhase;
  mode?: MoveMode;
  detail?: string;
  tablesReady?: number;
  tables?: number;
};

/** One table as the verification saw it (the same on both sides, or the move failed). */
export type TableCheck = { table: string; rows: number; checksum: string };

export type MoveCopyOptions = {
  /** The source server as the platform role; its pathname is the project's database. */
  sourceUrl: string;
  /** The target server as the platform role; its pathname is the project's (prepared, empty) database. */
  targetUrl: string;
  /** How the target server itself reaches the source (the subscription's connection), when not `sourceUrl`. */
  sourceUrlFromTarget?: string;
  /** The project's schema (`p_<id>`). */
  schemaName: string;
  /** The project's login role: owner of its schema and objects, the same name on every server. */
  roleName: string;
  /** Called once before the final catch-up; once it resolves no write may reach the source. The caller releases it. */
  hold: () => Promise<void>;
  onProgress?: (p: MoveProgress) => void;
  signal?: AbortSignal;
  /** TESSERA_PG_BIN: the folder of pg_dump/pg_restore; empty: the newest of the PATH's and /usr/lib/postgresql/*. */
  pgBin?: string;
  /** `auto` (default): logical where both servers allow it, else dump. A forced mode that cannot run is refused. */
  mode?: 'auto' | MoveMode;
  logger?: Pick<Logger, 'info' | 'warn'>;
};

export type MoveCopyResult = {
  mode: MoveMode;
  /** Why this mode (the first thing that ruled logical replication out, or that it was allowed). */
  reason: string;
  tools: { dir: string; major: number };
  tables: TableCheck[];
  sequences: number;
};

/** The schema every project database has from its template whose rows belong to the project (after-hook outbox). */
const OUTBOX = { schema: 'tessera_hooks', table: 'outbox' } as const;
/** How long a logical copy that differs from its (fenced) source may take to catch up before the move fails. */
const VERIFY_SETTLE_MS = 5_000;
const APP = 'tessera-move';

/** Publication and subscription names (per database), and the replication slot's (cluster-wide: carries the database). */
export function moveObjectNames(databaseName: string): { publication: string; subscription: string; slot: string } {
  const h = crypto.createHash('sha256').update(databaseName, 'utf8').digest('hex').slice(0, 20);
  return { publication: 'tessera_move', subscription: 'tessera_move', slot: `tessera_move_${h}` };
}

const databaseOf = (url: string): string => decodeURIComponent(new URL(url).pathname.slice(1));

const failed = (message: string, details?: Record<string, unknown>): AppError =>
  new AppError('MOVE_FAILED', message, details);

async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url, application_name: APP });
  c.on('error', () => {}); // a lost connection fails the query in flight
  await c.connect();
  await c.query('set search_path = pg_catalog');
  return c;
}

async function withClient<T>(url: string, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = await connect(url);
  try {
    return await fn(c);
  } finally {
    await c.end().catch(() => {});
  }
}

const majorOf = async (c: pg.Client): Promise<number> =>
  Math.floor(
    Number((await c.query<{ v: string }>(`select current_setting('server_version_num') as v`)).rows[0]!.v) / 10_000,
  );

// ---------------------------------------------------------------------------------------------------------------
// Tools

/**
 * The pg_dump/pg_restore to use for servers of major version `need` (the higher of the two), see platform/pg-tools.ts;
 * refuses with MOVE_UNSUPPORTED naming the versions when none is new enough.
 */
export function findPgTools(pgBin: string | undefined, need: number): PgTools {
  const r = pgToolsFor(pgBin, need);
  if (r.tools) return r.tools;
  throw new AppError('MOVE_UNSUPPORTED', r.problem, {
    tools_version: r.newest,
    server_version: need,
    pg_bin: pgBin || null,
  });
}

/** A libpq connection for a tool: the URL without its password (which goes in PGPASSWORD). */
function toolConnection(url: string): { dbname: string; env: Record<string, string> } {
  const u = new URL(url);
  const password = decodeURIComponent(u.password);
  u.password = '';
  return { dbname: u.toString(), env: password ? { PGPASSWORD: password } : {} };
}

type Tool = { cmd: string; args: string[]; env: Record<string, string> };

function toolEnv(env: Record<string, string>): NodeJS.ProcessEnv {
  const base = { ...process.env };
  for (const k of Object.keys(base)) if (k.startsWith('PG')) delete base[k]; // only what we say
  return { ...base, PGAPPNAME: APP, PGCONNECT_TIMEOUT: '15', ...env };
}

const describe = (t: Tool): string => `${path.basename(t.cmd)} ${t.args.filter((a) => !a.includes('://')).join(' ')}`;

/** Runs `tools` as a pipeline (each one's stdout into the next's stdin); resolves with the last one's stdout. */
async function runPipeline(tools: Tool[], signal?: AbortSignal): Promise<string> {
  const children = tools.map((t) =>
    spawn(t.cmd, t.args, { env: toolEnv(t.env), stdio: ['pipe', 'pipe', 'pipe'], signal, killSignal: 'SIGTERM' }),
  );
  const stderr = children.map(() => '');
  let out = '';
  children.forEach((c, i) => {
    c.on('error', () => {}); // reported through 'close' below (spawn failures and aborts)
    c.stderr.on('data', (d: Buffer) => {
      stderr[i] = (stderr[i] + d.toString()).slice(-8_000);
    });
    if (i > 0) {
      children[i - 1]!.stdout.pipe(c.stdin);
      c.stdin.on('error', () => {}); // the next one died: its own exit status says so
    }
  });
  children[0]!.stdin.end();
  children.at(-1)!.stdout.on('data', (d: Buffer) => {
    out += d.toString();
  });
  const codes = await Promise.all(
    children.map(
      (c) =>
        new Promise<number | string>((resolve) => {
          c.on('close', (code, sig) => resolve(code ?? sig ?? -1));
          c.on('error', (err) => resolve(err.message));
        }),
    ),
  );
  signal?.throwIfAborted();
  const bad = codes.findIndex((c) => c !== 0);
  if (bad >= 0)
    throw failed(`${describe(tools[bad]!)} failed (${codes[bad]}): ${stderr[bad]!.trim()}`, {
      tool: path.basename(tools[bad]!.cmd),
    });
  return out;
}

// ---------------------------------------------------------------------------------------------------------------
// What the move copies

type Relation = { name: string; kind: string };

/** The project's relations (tables, views, sequences, ...) by name and kind, and the outbox. */
async function relationsOf(c: pg.Client, schema: string): Promise<Relation[]> {
  const { rows } = await c.query<{ name: string; kind: string }>(
    `select n.nspname || '.' || c.relname as name, c.relkind::text as kind from pg_class c
       join pg_namespace n on n.oid = c.relnamespace
      where (n.nspname = $1 and c.relkind in ('r', 'p', 'v', 'm', 'S', 'f'))
         or (n.nspname = $2 and c.relname = $3)
      order by 1`,
    [schema, OUTBOX.schema, OUTBOX.table],
  );
  return rows;
}

const quoted = (qualified: string): string => {
  const dot = qualified.indexOf('.');
  return `${ident(qualified.slice(0, dot))}.${ident(qualified.slice(dot + 1))}`;
};

/** Row count and order-independent checksum of every table (as the project's role, RLS off: a policy never runs). */
async function checksums(
  c: pg.Client,
  tables: string[],
  roleName: string,
  signal?: AbortSignal,
): Promise<TableCheck[]> {
  await c.query('begin isolation level repeatable read read only');
  try {
    await c.query(`set local role ${ident(roleName)}; set local row_security = off`);
    const out: TableCheck[] = [];
    for (const t of tables) {
      signal?.throwIfAborted();
      const { rows } = await c.query<{ n: string; h: string }>(
        `select count(*)::text as n, coalesce(sum(hashtextextended(t::text, 0)), 0)::text as h from only ${quoted(t)} t`,
      );
      out.push({ table: t, rows: Number(rows[0]!.n), checksum: rows[0]!.h });
    }
    return out;
  } finally {
    await c.query('rollback').catch(() => {});
  }
}

type SequenceState = { name: string; last: string; called: boolean };

async function sequencesOf(c: pg.Client, schema: string): Promise<SequenceState[]> {
  const { rows } = await c.query<{ name: string }>(
    `select n.nspname || '.' || c.relname as name from pg_class c join pg_namespace n on n.oid = c.relnamespace
      where c.relkind = 'S' and n.nspname in ($1, $2) order by 1`,
    [schema, OUTBOX.schema],
  );
  const out: SequenceState[] = [];
  for (const { name } of rows) {
    const s = await c.query<{ last: string; called: boolean }>(
      `select last_value::text as last, is_called as called from ${quoted(name)}`,
    );
    out.push({ name, last: s.rows[0]!.last, called: s.rows[0]!.called });
  }
  return out;
}

/** Why logical replication cannot carry this move (empty: it can). */
async function logicalBlockers(
  src: pg.Client,
  dst: pg.Client,
  schema: string,
  tables: Relation[],
  dstMajor: number,
): Promise<string[]> {
  const why: string[] = [];
  const wal = (await src.query<{ v: string }>(`select current_setting('wal_level') as v`)).rows[0]!.v;
  if (wal !== 'logical') why.push(`the source's wal_level is ${wal}, not logical`);
  const role = (
    await src.query<{ ok: boolean }>(
      'select rolreplication or rolsuper as ok from pg_roles where rolname = current_user',
    )
  ).rows[0];
  if (!role?.ok) why.push('the platform role has no REPLICATION attribute on the source');
  const slots = (
    await src.query<{ free: number }>(
      `select current_setting('max_replication_slots')::int - (select count(*) from pg_replication_slots)::int as free`,
    )
  ).rows[0]!.free;
  // The subscription's slot, and one per table being synchronised at once (max_sync_workers_per_subscription: 2).
  if (slots < 3) why.push(`the source has ${slots} free replication slots (3 needed)`);
  const target = (
    await dst.query<{ su: boolean; can: boolean; workers: number }>(
      `select r.rolsuper as su,
              $1::int >= 16 and pg_has_role(current_user, oid_of, 'member') as can,
              current_setting('max_logical_replication_workers')::int as workers
         from pg_roles r, (select coalesce((select oid from pg_roles where rolname = 'pg_create_subscription'), 0) as oid_of) x
        where r.rolname = current_user`,
      [dstMajor],
    )
  ).rows[0]!;
  if (!target.su && !target.can)
    why.push(
      `the platform role on the target may not create a subscription (PostgreSQL ${dstMajor}: ${dstMajor >= 16 ? 'pg_create_subscription' : 'a superuser'})`,
    );
  if (target.workers < 1) why.push('the target allows no logical replication workers');
  if (dstMajor < 16) {
    const fns = await src.query<{ name: string }>(
      `select p.proname as name from pg_proc p join pg_namespace n on n.oid = p.pronamespace where n.nspname = $1 limit 3`,
      [schema],
    );
    if (fns.rowCount)
      why.push(
        `the project defines functions (${fns.rows.map((r) => r.name).join(', ')}); a PostgreSQL ${dstMajor} subscription applies changes as a superuser, which would run them with its rights`,
      );
  }
  const names = tables.filter((t) => t.kind === 'r').map((t) => t.name);
  if (names.length > 0) {
    const { rows } = await src.query<{ name: string; unlogged: boolean; identity: boolean }>(
      `select n.nspname || '.' || c.relname as name, c.relpersistence = 'u' as unlogged,
              case c.relreplident
                when 'f' then true
                when 'n' then false
                when 'i' then exists (select 1 from pg_index i where i.indrelid = c.oid and i.indisreplident)
                else exists (select 1 from pg_index i where i.indrelid = c.oid and i.indisprimary) end as identity
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname || '.' || c.relname = any($1) order by 1`,
      [names],
    );
    for (const r of rows) {
      if (r.unlogged) why.push(`table ${r.name} is unlogged`);
      else if (!r.identity)
        why.push(`table ${r.name} has no primary key or replica identity (its updates could not be replicated)`);
    }
  }
  return why;
}

// ---------------------------------------------------------------------------------------------------------------
// Cleanup

/** Waits `ms`, or less when `signal` aborts (cleanup must not hang on an aborted move). */
const pause = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve) => {
    const t = setTimeout(resolve, ms);
    signal?.addEventListener(
      'abort',
      () => {
        clearTimeout(t);
        resolve();
      },
      { once: true },
    );
  });

/** `p`, or the abort's reason as soon as `signal` aborts (a hold that never comes back must not keep the move). */
async function unlessAborted<T>(p: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return await p;
  signal.throwIfAborted();
  let onAbort!: () => void;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
  });
  try {
    return await Promise.race([p, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

/** Drops the move's subscription from the target database (without touching the source: its slot goes below). */
async function dropSubscription(targetUrl: string, sub: string): Promise<void> {
  await withClient(targetUrl, async (c) => {
    const has = await c.query(
      'select 1 from pg_subscription where subname = $1 and subdbid = (select oid from pg_database where datname = current_database())',
      [sub],
    );
    if (!has.rowCount) return;
    await c.query(`alter subscription ${ident(sub)} disable`);
    await c.query(`alter subscription ${ident(sub)} set (slot_name = none)`);
    await c.query(`drop subscription ${ident(sub)}`);
  });
}

/** Drops the move's publication and its replication slots (the subscription's and table syncs') from the source database. */
async function dropSourceObjects(sourceUrl: string, names: ReturnType<typeof moveObjectNames>): Promise<void> {
  await withClient(sourceUrl, async (c) => {
    await c.query(`drop publication if exists ${ident(names.publication)}`);
    const mine = `database = current_database() and (slot_name = $1 or slot_name ~ '^pg_[0-9]+_sync_[0-9]+_[0-9]+$')`;
    const has = await c.query(`select 1 from pg_replication_slots where ${mine}`, [names.slot]);
    if (!has.rowCount) return;
    // A slot still in use (its subscriber's walsender has not noticed the subscription is gone) is ended, then dropped.
    for (let i = 0; i < 100; i++) {
      const { rows } = await c.query<{ slot_name: string; active_pid: number | null }>(
        `select slot_name, active_pid from pg_replication_slots where ${mine}`,
        [names.slot],
      );
      if (rows.length === 0) return;
      for (const r of rows) {
        if (r.active_pid) await c.query('select pg_terminate_backend($1)', [r.active_pid]).catch(() => {});
        else
          await c.query('select pg_drop_replication_slot($1)', [r.slot_name]).catch((err: { code?: string }) => {
            if (err.code !== '42704' && err.code !== '55006') throw err; // gone, or active again for a moment
          });
      }
      await pause(100);
    }
    throw failed(`the replication slot ${names.slot} stays in use on the source`);
  });
}

/**
 * Removes what a move of this database may have left (its subscription on the target, its publication and replication
 * slots on the source), whether it ended or its process died. Idempotent; a server that cannot be reached is an error
 * after the other side was cleaned. Never touches the project's data.
 */
export async function cleanupLeftovers(opts: { sourceUrl: string; targetUrl?: string }): Promise<void> {
  const names = moveObjectNames(databaseOf(opts.sourceUrl));
  const errs: unknown[] = [];
  if (opts.targetUrl) await dropSubscription(opts.targetUrl, names.subscription).catch((e: unknown) => errs.push(e));
  await dropSourceObjects(opts.sourceUrl, names).catch((e: unknown) => errs.push(e));
  if (errs.length > 0) throw errs[0];
}

// ---------------------------------------------------------------------------------------------------------------
// The copy

/** Copies the project's database from `sourceUrl` to `targetUrl`, verified; see the top of this file. */
export async function copyProjectDatabase(opts: MoveCopyOptions): Promise<MoveCopyResult> {
  const { schemaName: schema, roleName, signal } = opts;
  const report = (p: MoveProgress): void => opts.onProgress?.(p);
  const names = moveObjectNames(databaseOf(opts.sourceUrl));
  const src = await connect(opts.sourceUrl);
  let dst: pg.Client | undefined;
  let replicating = false;
  let work: string | undefined;
  try {
    dst = await connect(opts.targetUrl);
    removeStaleWork();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-move-'));
    signal?.throwIfAborted();
    report({ phase: 'check' });
    const [srcMajor, dstMajor] = [await majorOf(src), await majorOf(dst)];
    const tools = findPgTools(opts.pgBin, Math.max(srcMajor, dstMajor));
    const bin = (name: string): string => (tools.dir ? path.join(tools.dir, name) : name);
    const relations = await relationsOf(src, schema);
    if (!relations.length && !(await src.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount)
      throw failed(`the source database has no schema ${schema}`);
    if ((await dst.query('select 1 from pg_namespace where nspname = $1', [schema])).rowCount)
      throw failed(`the target database already has the schema ${schema}: prepare it again`);
    if ((await dst.query(`select 1 from ${quoted(`${OUTBOX.schema}.${OUTBOX.table}`)} limit 1`)).rowCount)
      throw failed('the target database already has after-hook outbox rows: prepare it again');
    const missing = await extensionsMissing(src, dst);
    if (missing.length)
      throw new AppError('MOVE_UNSUPPORTED', `the target server lacks the extensions ${missing.join(', ')}`, {
        extensions: missing,
      });
    const blockers = await logicalBlockers(src, dst, schema, relations, dstMajor);
    let mode: MoveMode;
    let reason: string;
    if (opts.mode === 'dump') [mode, reason] = ['dump', 'dump mode was asked for'];
    else if (blockers.length === 0) [mode, reason] = ['logical', 'both servers allow logical replication'];
    else if (opts.mode === 'logical')
      throw new AppError('MOVE_UNSUPPORTED', `logical replication cannot carry this move: ${blockers.join('; ')}`, {
        reasons: blockers,
      });
    else [mode, reason] = ['dump', blockers[0]!];
    opts.logger?.info({ mode, reason, tools }, 'move: copy starts');

    // Schema, dumped and restored as the project's own role.
    report({ phase: 'schema', mode });
    const source = toolConnection(opts.sourceUrl);
    const target = toolConnection(opts.targetUrl);
    const schemaFile = path.join(work, 'schema.dump');
    await runPipeline(
      [
        {
          cmd: bin('pg_dump'),
          args: [
            '--format=custom',
            '--schema-only',
            `--schema=${ident(schema)}`,
            `--role=${roleName}`,
            `--file=${schemaFile}`,
            `--dbname=${source.dbname}`,
          ],
          env: source.env,
        },
      ],
      signal,
    );
    // The schema itself is made here (its owner may not create schemas in the database), then left out of the list.
    await dst.query(`create schema ${ident(schema)} authorization ${ident(roleName)}`);
    const list = (await runPipeline([{ cmd: bin('pg_restore'), args: ['--list', schemaFile], env: {} }], signal))
      .split('\n')
      .filter((l) => !/^\d+; \d+ \d+ SCHEMA - /.test(l))
      .join('\n');
    const listFile = path.join(work, 'schema.list');
    fs.writeFileSync(listFile, list);
    const restore = (extra: string[]): Tool => ({
      cmd: bin('pg_restore'),
      args: [
        '--exit-on-error',
        '--single-transaction',
        `--role=${roleName}`,
        `--use-list=${listFile}`,
        ...extra,
        `--dbname=${target.dbname}`,
        schemaFile,
      ],
      env: target.env,
    });
    await runPipeline([restore(mode === 'logical' ? [] : ['--section=pre-data'])], signal);

    const tables = relations.filter((r) => r.kind === 'r').map((r) => r.name);
    if (mode === 'logical') {
      report({ phase: 'copy', mode, tablesReady: 0, tables: tables.length });
      replicating = true;
      await src.query(`create publication ${ident(names.publication)} for table ${tables.map(quoted).join(', ')}`);
      const conninfo = libpqConninfo(opts.sourceUrlFromTarget ?? opts.sourceUrl);
      await dst.query(
        `create subscription ${ident(names.subscription)} connection ${literal(conninfo)} publication ${ident(names.publication)}
           with (slot_name = ${literal(names.slot)}, copy_data = true, create_slot = true, enabled = true, synchronous_commit = 'local')`,
      );
      await waitForSync(
        dst,
        names.subscription,
        tables.length,
        (ready) => report({ phase: 'copy', mode, tablesReady: ready, tables: tables.length }),
        signal,
      );
    }

    report({ phase: 'hold', mode });
    await unlessAborted(opts.hold(), signal);

    report({ phase: 'catch-up', mode });
    if (mode === 'logical') {
      // The insert position, not pg_current_wal_lsn() (the write position): under synchronous_commit = off a commit
      // acknowledged before the hold may sit in WAL buffers past the write position (seen: a copy missing a row).
      const lsn = (await src.query<{ lsn: string }>('select pg_current_wal_insert_lsn()::text as lsn')).rows[0]!.lsn;
      await waitForLsn(src, names.slot, lsn, signal);
      report({ phase: 'sequences', mode });
      const seqs = await sequencesOf(src, schema);
      for (const s of seqs)
        await dst.query('select pg_catalog.setval($1::regclass, $2::bigint, $3)', [quoted(s.name), s.last, s.called]);
    } else {
      // The project's rows as the project's role; the outbox (the platform's table, no trigger, no constraint that
      // could run project code) as the platform role, which owns its sequence.
      const copyData = (tables: string[], as: string[]): Promise<string> =>
        runPipeline(
          [
            {
              cmd: bin('pg_dump'),
              args: [
                '--format=custom',
                '--data-only',
                ...as,
                ...tables.map((t) => `--table=${t}`),
                `--dbname=${source.dbname}`,
              ],
              env: source.env,
            },
            {
              cmd: bin('pg_restore'),
              args: ['--exit-on-error', '--single-transaction', '--data-only', ...as, `--dbname=${target.dbname}`],
              env: target.env,
            },
          ],
          signal,
        );
      await copyData([`${ident(schema)}.*`], [`--role=${roleName}`]);
      await copyData([`${OUTBOX.schema}.${OUTBOX.table}`, `${OUTBOX.schema}.${OUTBOX.table}_id_seq`], []);
      await runPipeline([restore(['--section=post-data'])], signal);
    }
    signal?.throwIfAborted();

    report({ phase: 'verify', mode });
    // Logical mode: the source is fenced and no longer changes, so a copy that differs can only be behind (a subscriber
    // may confirm a position before it applied the transaction it was receiving): it is checked again for a moment
    // before the move fails. A dump-mode copy is complete once restored: it is checked once.
    const settle = Date.now() + (mode === 'logical' ? VERIFY_SETTLE_MS : 0);
    let checked: Awaited<ReturnType<typeof verify>>;
    for (;;) {
      try {
        checked = await verify(src, opts.targetUrl, schema, roleName, tables, signal);
        break;
      } catch (err) {
        const behind = err instanceof AppError && Array.isArray(err.details?.tables);
        if (!behind || Date.now() >= settle) throw err;
        await pause(250, signal);
        signal?.throwIfAborted();
      }
    }
    signal?.throwIfAborted();
    opts.logger?.info({ mode, tables: checked.tables.length }, 'move: copy verified');
    return { mode, reason, tools, tables: checked.tables, sequences: checked.sequences };
  } catch (err) {
    if (err instanceof AppError) throw err;
    if (signal?.aborted) throw signal.reason ?? err;
    throw failed(`the copy failed: ${(err as Error).message}`);
  } finally {
    await src.end().catch(() => {});
    await dst?.end().catch(() => {});
    if (work) fs.rmSync(work, { recursive: true, force: true });
    if (replicating) {
      report({ phase: 'cleanup' });
      await cleanupLeftovers({ sourceUrl: opts.sourceUrl, targetUrl: opts.targetUrl }).catch((e: Error) =>
        opts.logger?.warn({ err: e.message }, 'move: cleanup failed; cleanupLeftovers will be tried again'),
      );
    }
  }
}

/** Work folders of moves whose process died (a day old: no copy runs that long without touching its folder). */
function removeStaleWork(): void {
  const dayAgo = Date.now() - 24 * 3600_000;
  for (const name of fs.readdirSync(os.tmpdir())) {
    if (!name.startsWith('tessera-move-')) continue;
    const dir = path.join(os.tmpdir(), name);
    try {
      if (fs.statSync(dir).mtimeMs < dayAgo) fs.rmSync(dir, { recursive: true, force: true });
    } catch {
      // gone meanwhile
    }
  }
}

/** Extensions the source database has that the target's does not (the template must have them). */
async function extensionsMissing(src: pg.Client, dst: pg.Client): Promise<string[]> {
  const q = 'select extname as n from pg_extension order by 1';
  const have = new Set((await dst.query<{ n: string }>(q)).rows.map((r) => r.n));
  return (await src.query<{ n: string }>(q)).rows.map((r) => r.n).filter((n) => !have.has(n));
}

/** The subscription's connection string (libpq key/value, so it is not echoed back as a URL in errors). */
function libpqConninfo(url: string): string {
  const u = new URL(url);
  const kv: [string, string][] = [
    ['host', u.hostname.replace(/^\[|\]$/g, '')],
    ['port', u.port || '5432'],
    ['dbname', decodeURIComponent(u.pathname.slice(1))],
    ['user', decodeURIComponent(u.username)],
    ['password', decodeURIComponent(u.password)],
    ['application_name', APP],
  ];
  for (const [k, v] of u.searchParams)
    if (/^(sslmode|sslrootcert|sslcert|sslkey|connect_timeout)$/.test(k)) kv.push([k, v]);
  return kv
    .filter(([, v]) => v !== '')
    .map(([k, v]) => `${k}='${v.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`)
    .join(' ');
}

/** Waits until every table of the subscription finished its initial copy; fails when the subscription reports errors. */
async function waitForSync(
  dst: pg.Client,
  sub: string,
  tables: number,
  onReady: (ready: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  let last = -1;
  for (;;) {
    signal?.throwIfAborted();
    const { rows } = await dst.query<{ ready: number; total: number; errors: string }>(
      `select count(*) filter (where r.srsubstate = 'r')::int as ready, count(*)::int as total,
              coalesce((select (apply_error_count + sync_error_count)::text from pg_stat_subscription_stats st where st.subid = s.oid), '0') as errors
         from pg_subscription s left join pg_subscription_rel r on r.srsubid = s.oid
        where s.subname = $1 and s.subdbid = (select oid from pg_database where datname = current_database())
        group by s.oid`,
      [sub],
    );
    const r = rows[0];
    if (!r) throw failed('the subscription disappeared from the target');
    if (Number(r.errors) > 0)
      throw failed('the subscription failed on the target (its server log says why)', { errors: Number(r.errors) });
    if (r.ready !== last) onReady((last = r.ready));
    if (r.total >= tables && r.ready === r.total) return;
    await pause(200, signal);
  }
}

/** Waits until the move's slot on the source confirms `lsn` (the subscriber applied and flushed everything before it). */
async function waitForLsn(src: pg.Client, slot: string, lsn: string, signal?: AbortSignal): Promise<void> {
  for (;;) {
    signal?.throwIfAborted();
    const { rows } = await src.query<{ done: boolean | null }>(
      `select confirmed_flush_lsn >= $2::pg_lsn as done from pg_replication_slots where slot_name = $1`,
      [slot, lsn],
    );
    if (!rows[0]) throw failed('the replication slot disappeared from the source');
    if (rows[0].done) return;
    await pause(20, signal);
  }
}

/** The same relations, rows, checksums and sequence positions on both sides, or MOVE_FAILED naming the differences. */
async function verify(
  src: pg.Client,
  targetUrl: string,
  schema: string,
  roleName: string,
  tables: string[],
  signal?: AbortSignal,
): Promise<{ tables: TableCheck[]; sequences: number }> {
  return await withClient(targetUrl, async (dst) => {
    const [a, b] = await Promise.all([relationsOf(src, schema), relationsOf(dst, schema)]);
    const key = (r: Relation): string => `${r.name}:${r.kind}`;
    const onlySource = a.filter((r) => !b.some((x) => key(x) === key(r))).map(key);
    const onlyTarget = b.filter((r) => !a.some((x) => key(x) === key(r))).map(key);
    if (onlySource.length || onlyTarget.length)
      throw failed('the copy does not have the same relations as the source', {
        only_source: onlySource,
        only_target: onlyTarget,
      });
    const [sa, sb] = await Promise.all([
      checksums(src, tables, roleName, signal),
      checksums(dst, tables, roleName, signal),
    ]);
    const differ = sa.flatMap((x, i) =>
      x.rows !== sb[i]!.rows || x.checksum !== sb[i]!.checksum
        ? [{ table: x.table, source_rows: x.rows, target_rows: sb[i]!.rows }]
        : [],
    );
    if (differ.length)
      throw failed(
        `the copy differs from the source (${differ.map((d) => `${d.table}: ${d.source_rows} rows there, ${d.target_rows} here`).join('; ')})`,
        { tables: differ },
      );
    const [qa, qb] = await Promise.all([sequencesOf(src, schema), sequencesOf(dst, schema)]);
    const seqDiffer = qa.filter(
      (s, i) => s.name !== qb[i]?.name || s.last !== qb[i]?.last || s.called !== qb[i]?.called,
    );
    if (seqDiffer.length || qa.length !== qb.length)
      throw failed("the copy does not have the source's sequence positions", {
        sequences: seqDiffer.map((s) => s.name),
      });
    return { tables: sa, sequences: qa.length };
  });
}
