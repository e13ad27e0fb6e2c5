// The webhook receiver cache: a change committed by ANY process (here: another connection publishing the
// broadcast in its own transaction, as the functions subgraph of another process does) is honoured by the
// very next lookup; nothing is served while the broadcast connection is down or after it was lost.
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import crypto from 'node:crypto';
import pg from 'pg';
import { createTestDatabase } from '../../support/database.ts';
import { createLogger } from '../../../platform/logger.ts';
import {
  configureBroadcasts,
  sealBroadcast,
  type BroadcastListener,
  type BroadcastTopics,
} from '../../../platform/broadcast.ts';
import {
  announceFunctionsChanged,
  createReceiverCache,
  type ReceiverEntry,
} from '../../../subgraphs/functions/services/receiver-cache.ts';
import type { EdgeFunction } from '../../../subgraphs/functions/services/functions.ts';

// Broadcasts are signed with a key from the internal secret (see platform/secrets.ts).
configureBroadcasts('test-internal-secret-0123456789abcdefghij');

const entryOf = (projectId: string, version = 1): ReceiverEntry => ({
  fn: {
    id: crypto.randomUUID(),
    projectId,
    tenantId: crypto.randomUUID(),
    name: 'f',
    slug: 'f',
    description: '',
    steps: [],
    timeoutMs: 1000,
    retries: 0,
    public: false,
    version,
    createdAt: new Date(),
    updatedAt: new Date(),
  } satisfies EdgeFunction,
  sealedSecrets: { KEY: 'sealed' },
});

describe('webhook receiver cache', () => {
  let db: { url: string; drop: () => Promise<void> };
  let other: pg.Client;
  const cache = createReceiverCache();

  /** What another process's functions subgraph does on a change: the NOTIFY inside its transaction. */
  const changeElsewhere = async (projectId: string) => {
    await other.query('begin');
    await other.query("select pg_notify('tessera_broadcast', $1)", [sealBroadcast('functions.changed', { projectId })]);
    await other.query('commit');
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    other = new pg.Client({ connectionString: db.url });
    await other.connect();
    await cache.start(db.url, createLogger('silent'));
  });
  afterAll(async () => {
    await cache.stop();
    await other?.end();
    await db?.drop();
  });

  it('serves a remembered receiver until its project changes, in another process, committed just before the lookup', async () => {
    for (let i = 0; i < 20; i++) {
      const projectId = crypto.randomUUID();
      const key = cache.keyOf(projectId, 'hook');
      cache.remember(key, entryOf(projectId), cache.generation());
      expect((await cache.get(key))?.fn.projectId).toBe(projectId);
      await changeElsewhere(projectId);
      // No waiting: the lookup's round trip on the broadcast connection delivers the committed change first.
      expect(await cache.get(key)).toBeUndefined();
    }
  });

  it('drops only the changed project, and a change announced in this process at once', async () => {
    const a = crypto.randomUUID();
    const b = crypto.randomUUID();
    cache.remember(cache.keyOf(a, 'x'), entryOf(a), cache.generation());
    cache.remember(cache.keyOf(a, 'y'), entryOf(a), cache.generation());
    cache.remember(cache.keyOf(b, 'x'), entryOf(b), cache.generation());
    announceFunctionsChanged(a);
    expect(await cache.get(cache.keyOf(a, 'x'))).toBeUndefined();
    expect(await cache.get(cache.keyOf(a, 'y'))).toBeUndefined();
    expect((await cache.get(cache.keyOf(b, 'x')))?.fn.projectId).toBe(b);
  });

  it('does not keep a lookup that raced with a change (read before it, remembered after it)', async () => {
    const projectId = crypto.randomUUID();
    const key = cache.keyOf(projectId, 'race');
    const generation = cache.generation(); // the lookup starts ...
    await changeElsewhere(projectId); // ... a change commits while it reads ...
    await cache.get(cache.keyOf(projectId, 'anything')); // (its NOTIFY is handled)
    cache.remember(key, entryOf(projectId), generation); // ... and the stale answer arrives
    expect(await cache.get(key)).toBeUndefined();
  });

  it('stays within its memory bound: an entry larger than the bound is not kept', async () => {
    const small = createReceiverCache({ maxBytes: 10_000 });
    small.attach({
      on: () => {},
      onReset: () => {},
      listening: () => true,
      sync: async () => {},
      stop: async () => {},
    });
    const projectId = crypto.randomUUID();
    const big: ReceiverEntry = { ...entryOf(projectId), sealedSecrets: { HUGE: 'x'.repeat(20_000) } };
    small.remember(small.keyOf(projectId, 'big'), big, small.generation());
    expect(small.size()).toBe(0);
    for (let i = 0; i < 50; i++)
      small.remember(small.keyOf(projectId, `s${i}`), entryOf(projectId), small.generation());
    expect(small.size()).toBeGreaterThan(0);
    expect(small.size()).toBeLessThan(50);
  });

  it('serves nothing without a listening broadcast connection, and forgets everything when it was lost', async () => {
    let listening = true;
    let reset = () => {};
    const handlers: ((p: BroadcastTopics['functions.changed']) => void)[] = [];
    const fake: Pick<BroadcastListener, 'on' | 'onReset' | 'listening' | 'sync' | 'stop'> = {
      on: (_topic, h) => void handlers.push(h as never),
      onReset: (h) => void (reset = h),
      listening: () => listening,
      sync: async () => {},
      stop: async () => {},
    };
    const local = createReceiverCache();
    local.attach(fake);
    const projectId = crypto.randomUUID();
    const key = local.keyOf(projectId, 'hook');
    local.remember(key, entryOf(projectId), local.generation());
    expect(await local.get(key)).toBeDefined();
    listening = false;
    expect(await local.get(key)).toBeUndefined();
    local.remember(local.keyOf(projectId, 'other'), entryOf(projectId), local.generation());
    expect(local.size()).toBe(1); // not remembered while down
    listening = true;
    reset();
    expect(local.size()).toBe(0);
    expect(await local.get(key)).toBeUndefined();
    // A sync that fails (connection dropped mid-request) is a miss, never a stale hit.
    local.remember(key, entryOf(projectId), local.generation());
    const failing = createReceiverCache();
    failing.attach({ ...fake, sync: async () => Promise.reject(new Error('the broadcast connection is down')) });
    failing.remember(key, entryOf(projectId), failing.generation());
    expect(await failing.get(key)).toBeUndefined();
  });
});
