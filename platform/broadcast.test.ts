import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { asExecutor, createTestDatabase } from '../tests/support/database.ts';
import { createLogger } from './logger.ts';
import {
  configureBroadcasts,
  openBroadcast,
  publishBroadcast,
  publishBroadcastNow,
  sealBroadcast,
  startBroadcastListener,
  type BroadcastListener,
} from './broadcast.ts';

// Broadcasts are signed with a key from the internal secret (see platform/secrets.ts).
configureBroadcasts('test-internal-secret-0123456789abcdefghij');

async function until(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 15_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('platform broadcasts (LISTEN/NOTIFY to every process)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let client: pg.Client;
  let exec: ReturnType<typeof asExecutor>;
  const listeners: BroadcastListener[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    exec = asExecutor(client);
  });
  afterAll(async () => {
    for (const l of listeners) await l.stop();
    await client.end();
    await db.drop();
  });

  it("drops a message that does not carry the installation's signature (forged on the channel, or signed with another secret)", async () => {
    const log = createLogger('silent');
    const l = await startBroadcastListener({ url: db.url, logger: log });
    listeners.push(l);
    const seen: string[] = [];
    l.on('rate-limits.changed', (p) => seen.push(`${p.op}:${p.key}`));
    l.on('hooks.changed', (p) => seen.push(p.projectId));
    const forged = JSON.stringify({
      topic: 'rate-limits.changed',
      payload: { origin: 'x', scope: 'tenant.signIn.account', op: 'reset', key: 'k' },
    });
    await client.query(`select pg_notify('tessera_broadcast', $1)`, [forged]);
    await client.query(`select pg_notify('tessera_broadcast', $1)`, [`AAAA.${forged}`]);
    const signed = sealBroadcast('hooks.changed', { projectId: 'other-installation' });
    configureBroadcasts('another-secret-of-another-installation-0123');
    const foreign = sealBroadcast('hooks.changed', { projectId: 'foreign' });
    configureBroadcasts('test-internal-secret-0123456789abcdefghij');
    await client.query(`select pg_notify('tessera_broadcast', $1)`, [foreign]);
    // A signature is over the whole message: the same signature on another body is refused.
    await client.query(`select pg_notify('tessera_broadcast', $1)`, [`${signed.split('.')[0]}.${forged}`]);
    await publishBroadcastNow(client, 'hooks.changed', { projectId: 'genuine' });
    await until(() => seen.includes('genuine'), 'the genuine broadcast');
    expect(seen).toEqual(['genuine']);
    expect(openBroadcast(signed)).toEqual({ topic: 'hooks.changed', payload: { projectId: 'other-installation' } });
  });

  it('reaches every listener, delivers committed messages only, and routes by topic', async () => {
    const log = createLogger('silent');
    const a = await startBroadcastListener({ url: db.url, logger: log });
    const b = await startBroadcastListener({ url: db.url, logger: log });
    listeners.push(a, b);
    const seenA: string[] = [];
    const seenB: string[] = [];
    const hooks: string[] = [];
    a.on('credentials.changed', (p) => seenA.push(p.projectId ?? '?'));
    b.on('credentials.changed', (p) => seenB.push(p.projectId ?? '?'));
    b.on('hooks.changed', (p) => hooks.push(p.projectId));

    await client.query('begin');
    await publishBroadcast(exec, 'credentials.changed', { projectId: 'rolled-back' });
    await client.query('rollback');
    await client.query('begin');
    await publishBroadcast(exec, 'credentials.changed', { projectId: 'committed' });
    expect(seenA).toEqual([]); // not before commit
    await client.query('commit');
    await publishBroadcastNow(client, 'hooks.changed', { projectId: 'p1' });

    await until(() => seenA.length === 1 && seenB.length === 1 && hooks.length === 1, 'the broadcasts');
    expect(seenA).toEqual(['committed']);
    expect(seenB).toEqual(['committed']);
    expect(hooks).toEqual(['p1']);
  });

  it('calls the reset handlers after its connection is lost, and listens again', async () => {
    const log = createLogger('silent');
    const l = await startBroadcastListener({ url: db.url, logger: log });
    listeners.push(l);
    let resets = 0;
    const seen: string[] = [];
    l.onReset(() => resets++);
    l.on('hooks.changed', (p) => seen.push(p.projectId));
    // Kill the listeners' backends of this test's database (other test files run beside it) from another session.
    await client.query(
      `select pg_terminate_backend(pid) from pg_stat_activity where query = 'listen tessera_broadcast' and datname = current_database() and pid <> pg_backend_pid()`,
    );
    await until(() => resets >= 2, 'the reset after reconnecting');
    await publishBroadcastNow(client, 'hooks.changed', { projectId: 'after' });
    await until(() => seen.includes('after'), 'a broadcast after reconnecting');
  });

  it('shares one LISTEN connection per database among the listeners of a process, closed with the last one', async () => {
    const log = createLogger('silent');
    const listens = async () =>
      Number(
        (
          await client.query(
            `select count(*)::int as n from pg_stat_activity where query = 'listen tessera_broadcast' and datname = current_database()`,
          )
        ).rows[0].n,
      );
    for (const l of listeners.splice(0)) await l.stop();
    expect(await listens()).toBe(0);
    const a = await startBroadcastListener({ url: db.url, logger: log });
    const b = await startBroadcastListener({ url: db.url, logger: log });
    expect(await listens()).toBe(1);
    const seen: string[] = [];
    b.on('hooks.changed', (p) => seen.push(p.projectId));
    await a.stop();
    expect(a.listening()).toBe(false);
    expect(b.listening()).toBe(true);
    await publishBroadcastNow(client, 'hooks.changed', { projectId: 'still' });
    await b.sync();
    expect(seen).toEqual(['still']);
    await b.stop();
    const end = Date.now() + 15_000;
    while ((await listens()) !== 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(await listens()).toBe(0);
  });
});
