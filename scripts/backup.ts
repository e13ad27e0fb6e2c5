// Backup and restore of a whole installation: `npm run backup -- create <folder>` and
// `npm run backup -- restore <folder>`. A backup holds everything needed to bring an installation back:
//   platform.dump        the platform database (pg_dump custom format): accounts, projects, keys, secrets (sealed),
//                        tokens' revocation state, functions, executions, the scheduler's jobs...
//   projects/<db>.dump   each project's own database, listed in the data subgraph's table `data_project_roles`,
//                        dumped from the project server its row names (`server_id`: `default` is the configured one,
//                        TESSERA_PROJECTS_DATABASE_URL or the platform's; others are the fleet's `data_servers`, their
//                        URLs sealed with the internal secret); the manifest records each project's server
//   blobs/<key>          the bytes of every stored object, read through the blob store (fs or S3 alike)
//   internal.secret      the internal secret when it lives in the data folder (it seals keys, secrets and the
//                        projects' role passwords: without it a restored database cannot be read). When it comes
//                        from TESSERA_INTERNAL_SECRET it is not written here: keep it with the backup yourself.
//   manifest.json        what is in the folder
// Restore expects the configured server with an empty platform database (DATABASE_URL) and no project databases or
// roles of the backup on the project servers, and the same platform role name as the backup's (it owns the
// project databases). Each project comes back on the server its row names, at the URL the restored registry holds;
// `--server ID=URL` (repeatable) restores a server's projects to another URL instead and registers that URL (new hosts).
// Run it with Tessera stopped. Needs pg_dump/pg_restore of the servers' major version or newer (TESSERA_PG_BIN names
// their folder; default: the PATH).
import fs from 'node:fs';
import path from 'node:path';
import { spawnSync } from 'node:child_process';
import { pipeline } from 'node:stream/promises';
import { loadConfig, type Config } from '../platform/config.ts';
import { createSecretBox } from '../platform/crypto.ts';
import { openBlobStore, blobKeyOf } from '../platform/blob-store/index.ts';
import { withPgClient } from '../platform/pg-pool.ts';
import { pgToolPath } from '../platform/pg-tools.ts';
import { scramVerifier } from '../subgraphs/data/services/provisioning.ts';

export type ProjectRoleDef = { name: string; login: boolean; inherit: boolean; connectionLimit: number };

export type Manifest = {
  format: 'tessera-backup/1';
  createdAt: string;
  platformRole: string;
  /** Each project's database and its roles (cluster-wide, so in no database dump): which may log in, who is a member of whom. */
  projects: {
    projectId: string;
    /** The project server it was dumped from (`default`: the configured one); absent in backups before the fleet. */
    server?: string;
    database: string;
    file: string;
    roles: ProjectRoleDef[];
    memberships: [role: string, member: string][];
  }[];
  blobs: number;
  secret: 'file' | 'environment';
};

function tool(config: Config, name: 'pg_dump' | 'pg_restore'): string {
  return pgToolPath(config.pgBin, name);
}

function run(cmd: string, args: string[]): string {
  const r = spawnSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], maxBuffer: 256 * 1024 * 1024 });
  if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
  if (r.status !== 0)
    throw new Error(
      `${cmd} ${args.filter((a) => !a.includes('://')).join(' ')} failed (${r.status}): ${r.stderr.trim()}`,
    );
  return r.stdout;
}

/**
 * Restores a dump into an existing database, leaving out what the new database already has from its template:
 * extensions (pgvector is created by a superuser in template1, not by Tessera's role) and schemas that exist.
 */
async function restoreInto(config: Config, url: string, file: string, extra: string[]): Promise<void> {
  const existing = await withPgClient(
    url,
    async (c) => new Set((await c.query<{ n: string }>('select nspname as n from pg_namespace')).rows.map((r) => r.n)),
  );
  const skipped = (line: string): boolean => {
    if (/^\d+; \d+ \d+ (EXTENSION|COMMENT - EXTENSION) /.test(line)) return true;
    const schema = /^\d+; \d+ \d+ (?:SCHEMA|ACL|COMMENT) - (?:SCHEMA )?(\S+) /.exec(line)?.[1];
    return (
      /^\d+; \d+ \d+ (SCHEMA|ACL - SCHEMA|COMMENT - SCHEMA) /.test(line) && schema !== undefined && existing.has(schema)
    );
  };
  const list = run(tool(config, 'pg_restore'), ['--list', file])
    .split('\n')
    .filter((l) => !skipped(l))
    .join('\n');
  const listFile = `${file}.restore-list`;
  fs.writeFileSync(listFile, list);
  try {
    run(tool(config, 'pg_restore'), ['--exit-on-error', `--use-list=${listFile}`, ...extra, `--dbname=${url}`, file]);
  } finally {
    fs.rmSync(listFile, { force: true });
  }
}

/** The URL of database `name` on the server of `url`. */
function onDatabase(url: string, name: string): string {
  const u = new URL(url);
  u.pathname = `/${encodeURIComponent(name)}`;
  return u.toString();
}

function ident(name: string): string {
  return `"${name.replace(/"/g, '""')}"`;
}

/** The configuration and the two databases a backup is of (the projects' server is the platform's unless set). */
function databasesOf(env: Record<string, string | undefined>) {
  const config = loadConfig(env);
  if (!config.databaseUrl)
    throw new Error(
      'DATABASE_URL is required: backups are of a PostgreSQL server (for the embedded one, point DATABASE_URL at it while it runs)',
    );
  return { config, platformUrl: config.databaseUrl, projectsUrl: config.projectsDatabaseUrl ?? config.databaseUrl };
}

type ProjectRow = {
  project_id: string;
  database_name: string | null;
  role_name: string;
  user_role_name: string;
  password_sealed: string;
  server_id: string;
};

async function projectRows(platformUrl: string): Promise<ProjectRow[]> {
  return await withPgClient(platformUrl, async (c) => {
    const exists = (await c.query(`select to_regclass('data_project_roles') as t`)).rows[0].t;
    if (!exists) return [];
    // `server_id` came with the fleet (data migration 0005): a platform database from before has every project on the default server.
    const fleet = (
      await c.query(
        `select 1 from information_schema.columns where table_name = 'data_project_roles' and column_name = 'server_id' and table_schema = current_schema()`,
      )
    ).rowCount;
    return (
      await c.query<ProjectRow>(
        `select project_id, database_name, role_name, user_role_name, password_sealed, ${fleet ? 'server_id' : `'default' as server_id`}
           from data_project_roles order by project_id`,
      )
    ).rows;
  });
}

/**
 * The project servers' URLs (as the platform role) by id: `default` is `projectsUrl`, the others the fleet's
 * `data_servers` rows, unsealed with `secret` (purpose 'data:servers', as the data subgraph seals them). Read lazily:
 * an installation whose projects are all on the default server needs no secret here.
 */
function serverUrls(platformUrl: string, projectsUrl: string, secret: () => string) {
  let read: Promise<Map<string, string>> | undefined;
  const all = (): Promise<Map<string, string>> =>
    (read ??= withPgClient(platformUrl, async (c) => {
      const urls = new Map<string, string>([['default', projectsUrl]]);
      if (!(await c.query(`select to_regclass('data_servers') as t`)).rows[0].t) return urls;
      const rows = (
        await c.query<{ id: string; url_sealed: string | null }>('select id, url_sealed from data_servers')
      ).rows.filter((r) => r.url_sealed !== null);
      if (rows.length === 0) return urls;
      const box = createSecretBox(secret(), 'data:servers');
      for (const r of rows) urls.set(r.id, box.decrypt(r.url_sealed!));
      return urls;
    }));
  return async (id: string): Promise<string> => {
    if (id === 'default') return projectsUrl;
    const url = (await all()).get(id);
    if (!url) throw new Error(`project server ${id} is not in data_servers`);
    return url;
  };
}

/** The internal secret of the installation `config` describes: TESSERA_INTERNAL_SECRET, else its data folder's file. */
function installedSecret(config: Config): string {
  if (config.internalSecret) return config.internalSecret;
  const file = path.join(config.dataDirAbs, 'internal.secret');
  if (!fs.existsSync(file))
    throw new Error('no internal secret: neither TESSERA_INTERNAL_SECRET nor <data folder>/internal.secret');
  return fs.readFileSync(file, 'utf8').trim();
}

/** Writes a backup of the installation `env` configures into `dir` (created; must be empty). */
export async function createBackup(
  dir: string,
  env: Record<string, string | undefined> = process.env,
): Promise<Manifest> {
  const { config, platformUrl, projectsUrl } = databasesOf(env);
  const urlOf = serverUrls(platformUrl, projectsUrl, () => installedSecret(config));
  fs.mkdirSync(path.join(dir, 'projects'), { recursive: true });
  if (fs.readdirSync(dir).some((f) => f !== 'projects')) throw new Error(`${dir} is not empty`);
  run(tool(config, 'pg_dump'), [
    '--format=custom',
    `--file=${path.join(dir, 'platform.dump')}`,
    `--dbname=${platformUrl}`,
  ]);
  const projects: Manifest['projects'] = [];
  for (const r of await projectRows(platformUrl)) {
    if (!r.database_name)
      throw new Error(
        `project ${r.project_id} still lives in the platform database (made by 0.1): upgrade it first (README "Upgrading")`,
      );
    const file = path.join('projects', `${r.database_name}.dump`);
    const serverUrl = await urlOf(r.server_id);
    // The project's roles: its login role and every role named after it (end users, anonymous visitors...).
    const { roles, memberships } = await withPgClient(serverUrl, async (c) => {
      const found = (
        await c.query<{ name: string; login: boolean; inherit: boolean; limit: number }>(
          `select rolname as name, rolcanlogin as login, rolinherit as inherit, rolconnlimit as limit from pg_roles where rolname = $1 or starts_with(rolname, $1 || '_') order by rolname`,
          [r.role_name],
        )
      ).rows;
      const names = found.map((x) => x.name);
      const members = (
        await c.query<{ role: string; member: string }>(
          `select r.rolname as role, m.rolname as member from pg_auth_members a join pg_roles r on r.oid = a.roleid join pg_roles m on m.oid = a.member
          where r.rolname = any($1) and m.rolname = any($1) order by 1, 2`,
          [names],
        )
      ).rows;
      return {
        roles: found.map((x) => ({ name: x.name, login: x.login, inherit: x.inherit, connectionLimit: x.limit })),
        memberships: members.map((m) => [m.role, m.member] as [string, string]),
      };
    });
    run(tool(config, 'pg_dump'), [
      '--format=custom',
      `--file=${path.join(dir, file)}`,
      `--dbname=${onDatabase(serverUrl, r.database_name)}`,
    ]);
    projects.push({
      projectId: r.project_id,
      server: r.server_id,
      database: r.database_name,
      file,
      roles,
      memberships,
    });
  }
  // Blobs: every stored object's bytes, by key, through the configured driver.
  const blobs = openBlobStore(config);
  let count = 0;
  try {
    const objects = await withPgClient(platformUrl, async (c) =>
      (await c.query(`select to_regclass('storage_objects') as t`)).rows[0].t
        ? (
            await c.query<{ project_id: string; id: string }>(
              `select project_id, id from storage_objects where status <> 'uploading'`,
            )
          ).rows
        : [],
    );
    for (const o of objects) {
      const key = blobKeyOf(o.project_id, o.id);
      if (!(await blobs.stat(key))) continue;
      const file = path.join(dir, 'blobs', ...key.split('/'));
      fs.mkdirSync(path.dirname(file), { recursive: true });
      await pipeline(await blobs.get(key), fs.createWriteStream(file));
      count++;
    }
  } finally {
    await blobs.close();
  }
  const secretFile = path.join(config.dataDirAbs, 'internal.secret');
  let secret: Manifest['secret'] = 'environment';
  if (!config.internalSecret) {
    if (!fs.existsSync(secretFile))
      throw new Error('no internal secret: neither TESSERA_INTERNAL_SECRET nor <data folder>/internal.secret');
    fs.copyFileSync(secretFile, path.join(dir, 'internal.secret'));
    fs.chmodSync(path.join(dir, 'internal.secret'), 0o600);
    secret = 'file';
  }
  const platformRole =
    new URL(platformUrl).username ||
    (await withPgClient(platformUrl, async (c) => (await c.query('select current_user as u')).rows[0].u as string));
  const manifest: Manifest = {
    format: 'tessera-backup/1',
    createdAt: new Date().toISOString(),
    platformRole: decodeURIComponent(platformRole),
    projects,
    blobs: count,
    secret,
  };
  fs.writeFileSync(path.join(dir, 'manifest.json'), JSON.stringify(manifest, null, 2));
  return manifest;
}

/**
 * Restores the backup in `dir` into the installation `env` configures (Tessera stopped, empty platform database).
 * `servers` (id → URL as the platform role) puts the projects of those fleet servers on other servers, and registers
 * those URLs in place of the backed-up ones.
 */
export async function restoreBackup(
  dir: string,
  env: Record<string, string | undefined> = process.env,
  opts: { servers?: Record<string, string> } = {},
): Promise<Manifest> {
  const { config, platformUrl, projectsUrl } = databasesOf(env);
  const manifest = JSON.parse(fs.readFileSync(path.join(dir, 'manifest.json'), 'utf8')) as Manifest;
  if (manifest.format !== 'tessera-backup/1') throw new Error(`${dir}: not a Tessera backup`);
  // The internal secret first: nothing sealed can be read without it.
  let secret = config.internalSecret;
  if (manifest.secret === 'file') {
    const saved = fs.readFileSync(path.join(dir, 'internal.secret'), 'utf8').trim();
    if (secret && secret !== saved)
      throw new Error(
        'TESSERA_INTERNAL_SECRET differs from the secret in the backup: unset it, or set it to the backed-up one',
      );
    if (!secret) {
      const file = path.join(config.dataDirAbs, 'internal.secret');
      if (fs.existsSync(file) && fs.readFileSync(file, 'utf8').trim() !== saved)
        throw new Error(`${file} holds another secret: move it away first`);
      fs.mkdirSync(config.dataDirAbs, { recursive: true, mode: 0o755 });
      fs.writeFileSync(file, saved, { mode: 0o600 });
    }
    secret = saved;
  }
  if (!secret)
    throw new Error(
      'the backup was made with TESSERA_INTERNAL_SECRET from the environment: set the same value to restore it',
    );
  const current = await withPgClient(
    platformUrl,
    async (c) => (await c.query('select current_user as u')).rows[0].u as string,
  );
  if (manifest.projects.length > 0 && current !== manifest.platformRole)
    throw new Error(
      `the platform role is "${current}", the backup's is "${manifest.platformRole}": project databases are owned by it, restore as that role`,
    );
  const tables = await withPgClient(platformUrl, async (c) =>
    Number((await c.query(`select count(*) as n from pg_tables where schemaname = 'public'`)).rows[0].n),
  );
  if (tables > 0) throw new Error('the platform database is not empty: restore into a new, empty database');
  await restoreInto(config, platformUrl, path.join(dir, 'platform.dump'), ['--no-owner', '--no-acl']);
  // Fleet servers moving to other URLs (new hosts): registered under their new URL before anything is made there.
  for (const [id, url] of Object.entries(opts.servers ?? {})) {
    if (id === 'default')
      throw new Error('the default server is TESSERA_PROJECTS_DATABASE_URL (or the platform server): set that instead');
    const { rowCount } = await withPgClient(platformUrl, (c) =>
      c.query('update data_servers set url_sealed = $2, updated_at = now() where id = $1', [
        id,
        createSecretBox(secret, 'data:servers').encrypt(url),
      ]),
    );
    if (rowCount !== 1) throw new Error(`--server ${id}: the backup has no project server of that id`);
  }
  const urlOf = serverUrls(platformUrl, projectsUrl, () => secret);
  // Each project's roles (cluster-wide, so not in a database dump), as the data subgraph makes them, then its
  // database, on the server its row names.
  const box = createSecretBox(secret, 'data:project-roles');
  const rows = new Map((await projectRows(platformUrl)).map((r) => [r.project_id, r]));
  const attrs = 'nosuperuser nocreatedb nocreaterole noreplication nobypassrls';
  for (const p of manifest.projects) {
    const r = rows.get(p.projectId);
    if (!r) throw new Error(`project ${p.projectId} is in the backup's files but not in data_project_roles`);
    await withPgClient(await urlOf(r.server_id), async (c) => {
      // The login role's password is the one sealed in data_project_roles (the data subgraph logs in with it).
      const verifier = scramVerifier(box.decrypt(r.password_sealed));
      for (const role of p.roles) {
        const login = role.login ? `login password '${verifier.replace(/'/g, "''")}'` : 'nologin';
        await c.query(
          `create role ${ident(role.name)} with ${login} ${role.inherit ? 'inherit' : 'noinherit'} ${attrs} connection limit ${Number(role.connectionLimit)}`,
        );
        await c.query(`grant ${ident(role.name)} to current_user`);
      }
      for (const [role, member] of p.memberships)
        if (member !== current) await c.query(`grant ${ident(role)} to ${ident(member)}`);
    });
  }
  // Each project database as the data subgraph makes it (owned by the platform role, only its login role may
  // connect), then its contents with their owners and grants; the role's session settings are put back by the data
  // subgraph when it starts (it aligns every project role's settings with its configuration).
  for (const p of manifest.projects) {
    const r = rows.get(p.projectId)!;
    const serverUrl = await urlOf(r.server_id);
    await withPgClient(serverUrl, async (c) => {
      await c.query(`create database ${ident(p.database)} template template1`);
      await c.query(`revoke connect, temporary on database ${ident(p.database)} from public`);
      await c.query(`grant connect on database ${ident(p.database)} to ${ident(r.role_name)}`);
    });
    await restoreInto(config, onDatabase(serverUrl, p.database), path.join(dir, p.file), []);
  }
  // Blobs back through the configured driver (which may differ from the backup's: fs → S3 moves them).
  const blobs = openBlobStore(config);
  try {
    const root = path.join(dir, 'blobs');
    for (const project of fs.existsSync(root) ? fs.readdirSync(root) : []) {
      for (const object of fs.readdirSync(path.join(root, project))) {
        await blobs.put(blobKeyOf(project, object), fs.createReadStream(path.join(root, project, object)));
      }
    }
  } finally {
    await blobs.close();
  }
  return manifest;
}

if (import.meta.main) {
  const [action, dir, ...rest] = process.argv.slice(2);
  // restore --server ID=URL: that fleet server's projects go to URL (repeatable).
  const servers: Record<string, string> = {};
  for (let i = 0; i < rest.length; i++) {
    const pair = rest[i] === '--server' ? rest[++i] : undefined;
    const eq = pair?.indexOf('=') ?? -1;
    if (!pair || eq < 1) {
      servers[''] = '';
      break;
    }
    servers[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  if ((action !== 'create' && action !== 'restore') || !dir || '' in servers || (action === 'create' && rest.length)) {
    console.error('usage: npm run backup -- create <folder> | restore <folder> [--server ID=URL ...]');
    process.exit(2);
  }
  (action === 'create'
    ? createBackup(path.resolve(dir))
    : restoreBackup(path.resolve(dir), process.env, { servers })
  ).then(
    (m) => {
      console.log(
        `${action === 'create' ? 'backed up' : 'restored'}: platform database, ${m.projects.length} project database(s), ${m.blobs} blob(s), internal secret ${m.secret === 'file' ? 'included' : 'from the environment (not in the backup)'}`,
      );
      process.exit(0);
    },
    (err: unknown) => {
      console.error((err as Error).message);
      process.exit(1);
    },
  );
}
