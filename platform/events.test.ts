import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { asExecutor, createTestDatabase } from '../tests/support/database.ts';
import { createLogger } from './logger.ts';
import { waitFor } from '../tests/support/wait-for.ts';
import {
  ensureEventTables,
  publishEvent,
  publishEventIfWanted,
  setEventInterest,
  startEventConsumer,
  type PlatformEvent,
} from './events.ts';

describe('platform events (transactional outbox)', () => {
  let db: { url: string; drop: () => Promise<void> };
  let client: pg.Client;
  let exec: ReturnType<typeof asExecutor>;

  beforeAll(async () => {
    db = await createTestDatabase();
    await ensureEventTables(db.url);
    await ensureEventTables(db.url); // idempotent
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
    exec = asExecutor(client);
  });
  afterAll(async () => {
    await client.end();
    await db.drop();
  });

  it('delivers committed events in order to each consumer, and never rolled-back ones', async () => {
    await publishEvent(exec, 'project.created', { projectId: 'a', tenantId: 't', name: 'A' });
    await client.query('begin');
    await publishEvent(exec, 'project.created', { projectId: 'rolled-back', tenantId: 't', name: 'X' });
    await client.query('rollback');
    await publishEvent(exec, 'project.deleted', { projectId: 'a', tenantId: 't' });

    const seenA: string[] = [];
    const seenB: string[] = [];
    const log = createLogger('silent');
    const a = await startEventConsumer({
      name: 'a',
      url: db.url,
      logger: log,
      handlers: {
        'project.created': async (e) => void seenA.push(`created:${e.payload.projectId}`),
        'project.deleted': async (e) => void seenA.push(`deleted:${e.payload.projectId}`),
      },
    });
    const b = await startEventConsumer({
      name: 'b',
      url: db.url,
      logger: log,
      handlers: { 'project.deleted': async (e) => void seenB.push(e.payload.projectId) },
    });
    expect(seenA).toEqual(['created:a', 'deleted:a']);
    expect(seenB).toEqual(['a']);

    // New events wake the consumers (LISTEN/NOTIFY), and nothing is delivered twice.
    await publishEvent(exec, 'project.created', { projectId: 'b', tenantId: 't', name: 'B' });
    await waitFor(() => seenA.length >= 3, { timeoutMs: 15_000, message: 'the new event' });
    expect(seenA).toEqual(['created:a', 'deleted:a', 'created:b']);
    await a.stop();
    await b.stop();
  });

  it('retries a failing handler from the failed event, keeping the order', async () => {
    const seen: number[] = [];
    let fail = true;
    const c = await startEventConsumer({
      name: 'flaky',
      url: db.url,
      logger: createLogger('silent'),
      handlers: {
        'project.created': async (e: PlatformEvent<'project.created'>) => {
          if (e.payload.projectId === 'b' && fail) throw new Error('transient');
          seen.push(e.id);
        },
      },
    });
    const firstPass = [...seen];
    fail = false;
    await c.drain();
    expect(seen.length).toBe(firstPass.length + 1);
    expect([...seen].sort((x, y) => x - y)).toEqual(seen);
    await c.stop();
  });

  it('re-makes its LISTEN connection after the server ends it, and catches up on what was published meanwhile', async () => {
    const seen: string[] = [];
    // No poll to hide a dead listener: only LISTEN/NOTIFY and the catch-up on reconnection can deliver.
    const c = await startEventConsumer({
      name: 'resilient',
      url: db.url,
      logger: createLogger('silent'),
      pollMs: 3_600_000,
      handlers: { 'project.created': async (e) => void seen.push(e.payload.projectId) },
    });
    await c.drain();
    seen.length = 0;
    const waitUntil = async (cond: () => boolean, what: string) =>
      await waitFor(cond, { timeoutMs: 15_000, message: what });
    const kill = () =>
      client.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'tessera-events-resilient' and datname = current_database()`,
      );
    await kill();
    // Published while the listener is down (or coming back): delivered on reconnection.
    await publishEvent(exec, 'project.created', { projectId: 'during-outage', tenantId: 't', name: 'D' });
    await waitUntil(() => seen.includes('during-outage'), 'the event published during the outage');
    await waitUntil(() => c.listening(), 'the listener to come back');
    await publishEvent(exec, 'project.created', { projectId: 'after', tenantId: 't', name: 'E' });
    await waitUntil(() => seen.includes('after'), 'an event after the reconnection (NOTIFY)');
    expect(seen).toEqual(['during-outage', 'after']);
    await c.stop();
  });

  it("records an interest-only event only for a project some consumer declared an interest in, in the caller's transaction", async () => {
    const count = async () =>
      Number(
        (await client.query(`select count(*) from tessera_events where type = 'identity.user.registered'`)).rows[0]
          .count,
      );
    const event = (projectId: string) => ({
      projectId,
      userId: 'u',
      email: 'a@example.com',
      emailVerified: false,
      createdAt: new Date().toISOString(),
    });
    expect(await publishEventIfWanted(exec, 'identity.user.registered', event('nobody-listens'))).toBe(false);
    expect(await count()).toBe(0);
    await setEventInterest(exec, 'consumer-x', 'p1', ['identity.user.registered', 'storage.object.created']);
    await setEventInterest(exec, 'consumer-y', 'p1', ['identity.user.registered']);
    expect(await publishEventIfWanted(exec, 'identity.user.registered', event('p1'))).toBe(true);
    expect(await publishEventIfWanted(exec, 'identity.user.registered', event('p2'))).toBe(false);
    // Rolled back with the caller's transaction.
    await client.query('begin');
    await publishEventIfWanted(exec, 'identity.user.registered', event('p1'));
    await client.query('rollback');
    expect(await count()).toBe(1);
    // One consumer's declaration leaves the others' alone; an empty one withdraws its own.
    await setEventInterest(exec, 'consumer-x', 'p1', []);
    expect(await publishEventIfWanted(exec, 'identity.user.registered', event('p1'))).toBe(true);
    await setEventInterest(exec, 'consumer-y', 'p1', []);
    expect(await publishEventIfWanted(exec, 'identity.user.registered', event('p1'))).toBe(false);
    expect(await count()).toBe(2);
  });
});
