// Project servers for a test platform, registered the way the data subgraph's fleet registry does it
// (subgraphs/data/services/fleet.ts `add`/`update`): a `data_servers` row whose URL is sealed under the internal
// secret (purpose 'data:servers'), then the `data.servers.changed` broadcast every data process reloads on. Placement
// reads the registry again for every new project, so a test steers where the next project goes by the servers'
// states (`placeOn`: the one server active, the others read-only) without waiting for the broadcast.
import pg from 'pg';
import { configureBroadcasts, publishBroadcastNow } from '../../platform/broadcast.ts';
import { createSecretBox } from '../../platform/crypto.ts';
import { TEST_SECRET, type TestPlatform } from './platform.ts';

/** A platform database; `secret`: its internal secret when it is not the test platforms' (a benchmark's Tessera). */
type Target = Pick<TestPlatform, 'databaseUrl'> & { secret?: string };
type State = 'active' | 'draining' | 'read-only';

async function onPlatform<T>(target: Target, fn: (c: pg.Client) => Promise<T>): Promise<T> {
  const c = new pg.Client({ connectionString: target.databaseUrl });
  await c.connect();
  try {
    configureBroadcasts(target.secret ?? TEST_SECRET);
    return await fn(c);
  } finally {
    await c.end();
  }
}

/** Registers project server `id` at `url` (the platform role's URL there: a superuser, or CREATEDB and CREATEROLE). */
export async function addProjectServer(
  target: Target,
  id: string,
  url: string,
  opts: { weight?: number; state?: State } = {},
): Promise<void> {
  const box = createSecretBox(target.secret ?? TEST_SECRET, 'data:servers');
  await onPlatform(target, async (c) => {
    await c.query('insert into data_servers (id, url_sealed, weight, state) values ($1, $2, $3, $4)', [
      id,
      box.encrypt(url),
      opts.weight ?? 1,
      opts.state ?? 'active',
    ]);
    await publishBroadcastNow(c, 'data.servers.changed', { serverId: id });
  });
}

/** Sets a server's state (and weight), as the operator's `update` does. */
export async function setServerState(target: Target, id: string, state: State, weight?: number): Promise<void> {
  await onPlatform(target, async (c) => {
    const { rowCount } = await c.query(
      'update data_servers set state = $2, weight = coalesce($3, weight), updated_at = now() where id = $1',
      [id, state, weight ?? null],
    );
    if (rowCount !== 1) throw new Error(`no project server ${id}`);
    await publishBroadcastNow(c, 'data.servers.changed', { serverId: id });
  });
}

/** New projects go to server `id` from now on: it is the one active server, every other one read-only. */
export async function placeOn(target: Target, id: string): Promise<void> {
  await onPlatform(target, async (c) => {
    await c.query(
      `update data_servers set state = case when id = $1 then 'active' else 'read-only' end, updated_at = now()`,
      [id],
    );
    await publishBroadcastNow(c, 'data.servers.changed', { serverId: id });
  });
}

/** The server a project's database lives on (its `data_project_roles` row), and its database's name. */
export async function projectServer(
  target: Target,
  projectId: string,
): Promise<{ serverId: string; database: string; role: string } | undefined> {
  return await onPlatform(target, async (c) => {
    const { rows } = await c.query<{ server_id: string; database_name: string; role_name: string }>(
      'select server_id, database_name, role_name from data_project_roles where project_id = $1',
      [projectId],
    );
    return rows[0] && { serverId: rows[0].server_id, database: rows[0].database_name, role: rows[0].role_name };
  });
}

/** Points server `id` at another URL (sealed again), as the operator's `update` does; every data process follows. */
export async function setServerUrl(target: Target, id: string, url: string): Promise<void> {
  const box = createSecretBox(target.secret ?? TEST_SECRET, 'data:servers');
  await onPlatform(target, async (c) => {
    const { rowCount } = await c.query('update data_servers set url_sealed = $2, updated_at = now() where id = $1', [
      id,
      box.encrypt(url),
    ]);
    if (rowCount !== 1) throw new Error(`no project server ${id}`);
    await publishBroadcastNow(c, 'data.servers.changed', { serverId: id });
  });
}
