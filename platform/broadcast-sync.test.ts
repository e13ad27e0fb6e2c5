import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import pg from 'pg';
import { createTestDatabase } from '../tests/support/database.ts';
import { createLogger } from './logger.ts';
import {
  configureBroadcasts,
  announceLocally,
  publishBroadcastNow,
  startBroadcastListener,
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
  });
});
