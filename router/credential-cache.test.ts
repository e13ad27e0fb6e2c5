import { describe, expect, it } from '@jest/globals';
import { sha256Hex } from '../platform/crypto.ts';
import { SYNC_LEASE_MS, type BroadcastTopics } from '../platform/broadcast.ts';
import { createCredentialCache } from './credential-cache.ts';

type Change = BroadcastTopics['credentials.changed'];

/** A listener driven by the test: what the broadcast connection would deliver. */
function testListener() {
  let onChange: ((c: Change) => void) | undefined;
  let onReset: (() => void) | undefined;
  let up = true;
  return {
    on: (_topic: string, fn: (c: Change) => void) => (onChange = fn),
    onReset: (fn: () => void) => (onReset = fn),
    listening: () => up,
    syncs: 0,
    since: [] as number[],
    syncSince: async function (this: { syncs: number; since: number[] }, since: number) {
      if (!up) throw new Error('down');
      this.syncs++;
      this.since.push(since);
    },
    stop: async () => {},
    deliver: (c: Change) => onChange!(c),
    drop: () => {
      up = false;
      onReset!();
    },
    reconnect: () => {
      up = true;
      onReset!();
    },
  };
}

const A = { kind: 'project', projectId: 'p-a', tenantId: 't-1' } as const;
const B = { kind: 'project', projectId: 'p-b', tenantId: 't-2' } as const;
const S = { kind: 'tenant', tenantId: 't-1', sessionId: 's-1' } as const;

function filled() {
  const l = testListener();
  const cache = createCredentialCache(l as never);
  const keys = {
    a: cache.keyOf({ apiKey: 'tsk_a' }),
    b: cache.keyOf({ apiKey: 'tsk_b' }),
    s: cache.keyOf({ bearer: 'jwt-s' }),
  };
  cache.remember(keys.a, A, cache.generation());
  cache.remember(keys.b, B, cache.generation());
  cache.remember(keys.s, S, cache.generation(), Date.now() + 60_000);
  return { l, cache, keys };
}

describe('credential cache', () => {
  it('keys API keys by the SHA-256 stored in projects.api_key_hash, and tokens apart from keys', async () => {
    const cache = createCredentialCache(testListener() as never);
    expect(cache.keyOf({ apiKey: 'tsk_x' })).toBe(`k:${sha256Hex('tsk_x')}`);
    expect(cache.keyOf({ bearer: 'tsk_x' })).not.toBe(cache.keyOf({ apiKey: 'tsk_x' }));
  });

  it('answers what it was told, each credential its own principal', async () => {
    const { cache, keys } = filled();
    expect(await cache.get(keys.a)).toEqual(A);
    expect(await cache.get(keys.b)).toEqual(B);
    expect(await cache.get(keys.s)).toEqual(S);
    expect(await cache.get(cache.keyOf({ apiKey: 'tsk_unknown' }))).toBeUndefined();
  });

  it("drops a project's credentials when the project's change is announced, and nothing else", async () => {
    const { l, cache, keys } = filled();
    l.deliver({ projectId: 'p-a' });
    expect(await cache.get(keys.a)).toBeUndefined();
    expect(await cache.get(keys.b)).toEqual(B);
    expect(await cache.get(keys.s)).toEqual(S);
  });

  it('drops a revoked session, a tenant, a key by its hash, or everything', async () => {
    const { l, cache, keys } = filled();
    l.deliver({ sessionIds: ['s-1'] });
    expect(await cache.get(keys.s)).toBeUndefined();
    expect(await cache.get(keys.a)).toEqual(A);
    l.deliver({ apiKeyHashes: [sha256Hex('tsk_b')] });
    expect(await cache.get(keys.b)).toBeUndefined();
    expect(await cache.get(keys.a)).toEqual(A);
    l.deliver({ tenantId: 't-1' });
    expect(await cache.get(keys.a)).toBeUndefined();
    const again = filled();
    again.l.deliver({ all: true });
    expect(again.cache.size()).toBe(0);
  });

  it('serves a hit only after the broadcast connection caught up, honouring a change that arrives meanwhile', async () => {
    const { l, cache, keys } = filled();
    l.syncSince = async function () {
      l.deliver({ projectId: 'p-a' }); // committed elsewhere just before the request: handed over by the round trip
    };
    expect(await cache.get(keys.a)).toBeUndefined();
    expect(await cache.get(keys.b)).toEqual(B);
  });

  it('asks for a round trip sent at most a lease before the request (the lease a revoking process waits out)', async () => {
    const { l, cache, keys } = filled();
    const before = performance.now();
    expect(await cache.get(keys.a)).toEqual(A);
    const after = performance.now();
    expect(l.since).toHaveLength(1);
    expect(l.since[0]).toBeGreaterThanOrEqual(before - SYNC_LEASE_MS);
    expect(l.since[0]).toBeLessThanOrEqual(after - SYNC_LEASE_MS);
  });

  it('serves no hit when the round trip fails (the connection just went down)', async () => {
    const { l, cache, keys } = filled();
    l.syncSince = async () => {
      throw new Error('down');
    };
    expect(await cache.get(keys.a)).toBeUndefined();
  });

  it('does not keep a lookup that was in flight when something was invalidated', async () => {
    const l = testListener();
    const cache = createCredentialCache(l as never);
    const key = cache.keyOf({ apiKey: 'tsk_a' });
    const before = cache.generation();
    l.deliver({ projectId: 'p-a' }); // the key was revoked while its lookup ran
    cache.remember(key, A, before);
    expect(await cache.get(key)).toBeUndefined();
  });

  it('trusts nothing while the broadcast connection is down, and starts empty once it is back', async () => {
    const { l, cache, keys } = filled();
    l.drop();
    expect(await cache.get(keys.a)).toBeUndefined();
    cache.remember(keys.a, A, cache.generation());
    expect(cache.size()).toBe(0);
    l.reconnect();
    expect(await cache.get(keys.a)).toBeUndefined();
    cache.remember(keys.a, A, cache.generation());
    expect(await cache.get(keys.a)).toEqual(A);
  });

  it('caches nothing without a listener', async () => {
    const cache = createCredentialCache(undefined);
    const key = cache.keyOf({ apiKey: 'tsk_a' });
    cache.remember(key, A, cache.generation());
    expect(await cache.get(key)).toBeUndefined();
  });

  it('serves a token no longer than its own expiry, and entries no longer than the TTL', async () => {
    const l = testListener();
    // The cache's clock is the test's: time moves only when the test says so.
    let clock = 1_700_000_000_000;
    const cache = createCredentialCache(l as never, { ttlMs: 1000, now: () => clock });
    const expired = cache.keyOf({ bearer: 'expired' });
    cache.remember(expired, S, cache.generation(), clock - 1);
    expect(await cache.get(expired)).toBeUndefined();
    const soon = cache.keyOf({ bearer: 'soon' });
    cache.remember(soon, S, cache.generation(), clock + 100);
    const key = cache.keyOf({ apiKey: 'tsk_a' });
    cache.remember(key, A, cache.generation());
    expect(await cache.get(soon)).toEqual(S);
    clock += 99;
    expect(await cache.get(soon)).toEqual(S);
    clock += 2;
    expect(await cache.get(soon)).toBeUndefined();
    clock += 898;
    expect(await cache.get(key)).toEqual(A);
    clock += 2;
    expect(await cache.get(key)).toBeUndefined();
  });

  it('asks for a check again in the last quarter of the TTL, unless a token expires before it would gain anything', () => {
    let clock = 1_700_000_000_000;
    const cache = createCredentialCache(testListener() as never, { ttlMs: 1000, now: () => clock });
    const key = cache.keyOf({ apiKey: 'tsk_a' });
    const token = cache.keyOf({ bearer: 'long-lived' });
    const ending = cache.keyOf({ bearer: 'ending' });
    cache.remember(key, A, cache.generation());
    cache.remember(token, S, cache.generation(), clock + 60_000);
    cache.remember(ending, S, cache.generation(), clock + 1_200);
    expect([cache.dueForRecheck(key), cache.dueForRecheck(token), cache.dueForRecheck(ending)]).toEqual([
      false,
      false,
      false,
    ]);
    clock += 800;
    expect([cache.dueForRecheck(key), cache.dueForRecheck(token), cache.dueForRecheck(ending)]).toEqual([
      true,
      true,
      false,
    ]);
    expect(cache.dueForRecheck(cache.keyOf({ apiKey: 'unknown' }))).toBe(false);
    // Checked again: a full TTL from now.
    cache.remember(key, A, cache.generation());
    expect(cache.dueForRecheck(key)).toBe(false);
  });

  it('shares a lookup among concurrent callers of one credential, not with a caller a lease later', async () => {
    const { cache, keys } = filled();
    let lookups = 0;
    const release: (() => void)[] = [];
    const lookup = () =>
      new Promise<string>((resolve) => {
        const n = ++lookups;
        release.push(() => resolve(`answer ${n}`));
      });
    const first = cache.shared(keys.a, lookup);
    const joined = cache.shared(keys.a, lookup);
    const other = cache.shared(keys.b, lookup); // another credential: a lookup of its own
    expect(lookups).toBe(2);
    // While one is running, a recheck is not asked for again.
    expect(cache.dueForRecheck(keys.a)).toBe(false);
    await new Promise((r) => setTimeout(r, SYNC_LEASE_MS + 20));
    // A lookup that started more than a lease ago may have read before a revocation answered meanwhile.
    const late = cache.shared(keys.a, lookup);
    expect(lookups).toBe(3);
    release.forEach((r) => r());
    expect(await Promise.all([first, joined, other, late])).toEqual(['answer 1', 'answer 1', 'answer 2', 'answer 3']);
    // Done: the next caller makes a new one.
    void cache.shared(keys.a, lookup);
    expect(lookups).toBe(4);
    release[3]!();
  });

  it('forgets one entry, and a lookup in flight meanwhile is not kept', async () => {
    const { cache, keys } = filled();
    const before = cache.generation();
    cache.forget(keys.a);
    expect(await cache.get(keys.a)).toBeUndefined();
    expect(await cache.get(keys.b)).toEqual(B);
    cache.remember(keys.a, A, before);
    expect(await cache.get(keys.a)).toBeUndefined();
  });

  it('stays within its size bound', async () => {
    const cache = createCredentialCache(testListener() as never, { max: 3 });
    for (let i = 0; i < 10; i++) cache.remember(cache.keyOf({ apiKey: `tsk_${i}` }), A, cache.generation());
    expect(cache.size()).toBe(3);
  });
});
