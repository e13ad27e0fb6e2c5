import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '../tests/support/database.ts';
import { createLogger } from './logger.ts';
import {
  configureBroadcasts,
  announceLocally,
  publishBroadcastNow,
  startBroadcastListener,
  SYNC_LEASE_MS,
  type BroadcastListener,
} from './broadcast.ts';

// Broadcasts are signed with a key from the internal secret (see platform/secrets.ts).
configureBroadcasts('test-internal-secret-0123456789abcdefghij');

describe('broadcast sync: a barrier after which every committed broadcast has been handled', () => {
  let db: { url: string; drop: () => Promise<void> };
  let publisher: pg.Client;
  let listener: BroadcastListener;
  const seen: string[] = [];

  beforeAll(async () => {
    db = await createTestDatabase();
    publisher = new pg.Client({ connectionString: db.url });
    await publisher.connect();
    listener = await startBroadcastListener({ url: db.url, logger: createLogger('silent') });
    listener.on('credentials.changed', (p) => seen.push(p.projectId ?? '?'));
  });
  afterAll(async () => {
    await listener?.stop();
    await publisher?.end();
    await db?.drop();
  });

  it('has handled a message committed by another connection before sync() resolves, every time', async () => {
    for (let i = 0; i < 50; i++) {
      await publishBroadcastNow(publisher, 'credentials.changed', { projectId: `p-${i}` });
      await listener.sync();
      expect(seen.at(-1)).toBe(`p-${i}`);
    }
  });

  it('serves many concurrent callers with few round trips, each after its own call', async () => {
    const before = seen.length;
    await publishBroadcastNow(publisher, 'credentials.changed', { projectId: 'burst' });
    await Promise.all(
      Array.from({ length: 100 }, () => listener.sync().then(() => expect(seen.slice(before)).toContain('burst'))),
    );
  });

  it('syncSince: has handled a message committed before `since` when it resolves, every time', async () => {
    for (let i = 0; i < 30; i++) {
      await publishBroadcastNow(publisher, 'credentials.changed', { projectId: `since-${i}` });
      await listener.syncSince(performance.now());
      expect(seen.at(-1)).toBe(`since-${i}`);
    }
  });

  it('syncSince: answers at once from a round trip sent late enough, and waits when the last one is older', async () => {
    // Resolved within a few microtasks (no I/O can complete meanwhile): no round trip was waited for.
    const first = async (p: Promise<void>) => {
      let done = false;
      void p.then(() => (done = true));
      for (let i = 0; i < 5; i++) await null;
      return done ? 'at once' : 'waits';
    };
    const before = performance.now();
    await listener.sync();
    expect(await first(listener.syncSince(before))).toBe('at once');
    expect(await first(listener.syncSince(before - SYNC_LEASE_MS))).toBe('at once');
    const later = performance.now();
    const pending = listener.syncSince(later);
    expect(await first(pending)).toBe('waits');
    await pending;
    expect(await first(listener.syncSince(later))).toBe('at once');
  });

  it('delivers announceLocally to the listeners of this process at once', () => {
    announceLocally('credentials.changed', { projectId: 'local' });
    expect(seen.at(-1)).toBe('local');
  });

  it('rejects once stopped (a cache then trusts nothing)', async () => {
    const other = await startBroadcastListener({ url: db.url, logger: createLogger('silent') });
    expect(other.listening()).toBe(true);
    await other.stop();
    expect(other.listening()).toBe(false);
    await expect(other.sync()).rejects.toThrow(/down/);
    await expect(other.syncSince(0)).rejects.toThrow(/down/);
  });
});
