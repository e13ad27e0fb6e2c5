// Migrations as the Supabase CLI keeps them: `tessera/migrations/<UTC timestamp>_<name>.sql` in the current folder
// (or --workdir), applied in order by `tessera db push` and recorded on the project with each file's sha256.
// `tessera migration new|list` live here; `db push|pull|dump` (commands/db.ts) use the helpers below.
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { AppliedMigration } from '../../schema.ts';
import { arg, flag, type Command } from '../command.ts';
import type { Ctx } from '../context.ts';
import { CliError, table } from '../output.ts';

/** A migration file of the folder. */
export type LocalMigration = { version: string; name: string; file: string; sql: string; checksum: string };

const FILE = /^([0-9]{1,32})_([A-Za-z0-9_.-]{1,100})\.sql$/;

/** sha256 of the file's text (UTF-8), hex: what the server records. */
export const checksumOf = (sql: string): string => crypto.createHash('sha256').update(sql, 'utf8').digest('hex');

/** The folder of migration files: `<workdir>/tessera/migrations`. */
export function migrationsDir(ctx: Ctx): string {
  return path.join(path.resolve(flag(ctx, 'workdir') ?? process.cwd()), 'tessera', 'migrations');
}

/** The folder's migration files, oldest first (other files are left alone; a duplicate version is an error). */
export function localMigrations(dir: string): LocalMigration[] {
  if (!fs.existsSync(dir)) return [];
  const out: LocalMigration[] = [];
  for (const f of fs.readdirSync(dir).sort()) {
    const m = FILE.exec(f);
    if (!m) continue;
    const sql = fs.readFileSync(path.join(dir, f), 'utf8');
    out.push({ version: m[1]!, name: m[2]!, file: path.join(dir, f), sql, checksum: checksumOf(sql) });
  }
  out.sort((a, b) => a.version.length - b.version.length || a.version.localeCompare(b.version));
  for (let i = 1; i < out.length; i++)
    if (out[i]!.version === out[i - 1]!.version)
      throw new CliError(
        `Two migrations have version ${out[i]!.version}: ${path.basename(out[i - 1]!.file)} and ${path.basename(out[i]!.file)}`,
      );
  return out;
}

/** A UTC timestamp YYYYMMDDHHMMSS, later than every version of the folder (two files made in one second differ). */
export function nextVersion(local: LocalMigration[], now = new Date()): string {
  let v = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  const last = local.at(-1)?.version;
  if (last && last.length === v.length && last >= v) v = String(BigInt(last) + 1n);
  return v;
}

/** A file name's part after the version: lower case, words joined by `_`. */
export function slug(name: string): string {
  const s = name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '')
    .slice(0, 100);
  if (!s) throw new CliError(`Not a usable migration name: "${name}" (letters, digits and _)`);
  return s;
}

/** Writes a new migration file; answers its path. */
export function writeMigration(ctx: Ctx, name: string, sql: string): { file: string; version: string; name: string } {
  const dir = migrationsDir(ctx);
  fs.mkdirSync(dir, { recursive: true });
  const version = nextVersion(localMigrations(dir));
  const n = slug(name);
  const file = path.join(dir, `${version}_${n}.sql`);
  fs.writeFileSync(file, sql, { flag: 'wx' });
  return { file, version, name: n };
}

export type MigrationState = {
  version: string;
  name: string;
  /** `applied`, `pending` (local only), `changed` (applied, and the file differs since), `remote` (no local file). */
  status: 'applied' | 'pending' | 'changed' | 'remote';
  file: string | null;
  checksum: string | null;
  appliedChecksum: string | null;
  appliedAt: string | null;
};

/** Local files against the project's applied migrations, by version. */
export function compare(local: LocalMigration[], applied: AppliedMigration[]): MigrationState[] {
  const remote = new Map(applied.map((m) => [m.version, m]));
  const out: MigrationState[] = local.map((l) => {
    const r = remote.get(l.version);
    remote.delete(l.version);
    return {
      version: l.version,
      name: l.name,
      status: !r ? 'pending' : r.checksum === l.checksum ? 'applied' : 'changed',
      file: l.file,
      checksum: l.checksum,
      appliedChecksum: r?.checksum ?? null,
      appliedAt: r?.appliedAt ?? null,
    };
  });
  for (const r of remote.values())
    out.push({
      version: r.version,
      name: r.name,
      status: 'remote',
      file: null,
      checksum: null,
      appliedChecksum: r.checksum,
      appliedAt: r.appliedAt,
    });
  return out.sort((a, b) => a.version.length - b.version.length || a.version.localeCompare(b.version));
}

/** Refuses when an applied migration's file changed since (naming each). */
export function refuseChanged(states: MigrationState[]): void {
  const changed = states.filter((s) => s.status === 'changed');
  if (changed.length === 0) return;
  throw new CliError(
    `${changed
      .map(
        (s) =>
          `Migration ${path.basename(s.file!)} was applied with checksum ${s.appliedChecksum!.slice(0, 12)}… but the file now has ${s.checksum!.slice(0, 12)}…`,
      )
      .join(
        '\n',
      )}\nAn applied migration must not change: restore the file (or write a new migration for the change). Nothing was applied.`,
    6,
  );
}

export const migration: Command = {
  name: 'migration',
  summary: 'Migration files of tessera/migrations: make a new one, list local against applied',
  usage: ['migration new <name> [--workdir DIR]', 'migration list [--workdir DIR]'],
  async run(ctx, args) {
    const sub = args[0];
    if (sub === 'new') {
      const made = writeMigration(ctx, arg(args, 1, 'name'), '');
      ctx.out.result(made, `Created new migration at ${path.relative(process.cwd(), made.file) || made.file}`);
      return;
    }
    if (sub === 'list') {
      const local = localMigrations(migrationsDir(ctx));
      const applied = await (await ctx.project()).data.migrations();
      const states = compare(local, applied);
      ctx.out.result({ migrations: states }, () =>
        states.length === 0
          ? `No migrations (make one with: tessera migration new <name>)`
          : table(
              states.map((s) => ({
                version: s.version,
                name: s.name,
                local: s.file ? s.checksum!.slice(0, 12) : '',
                remote: s.appliedChecksum ? s.appliedChecksum.slice(0, 12) : '',
                status: s.status,
                applied_at: s.appliedAt ?? '',
              })),
              ['version', 'name', 'local', 'remote', 'status', 'applied_at'],
            ),
      );
      return;
    }
    throw new CliError(sub ? `Unknown: migration ${sub}` : 'Missing: migration new <name> | migration list');
  },
};
