// The identity subgraph's two caches (clients.ts, token-cache.ts): a lookup that overlapped a change is
// never kept, nothing is served while broadcasts are not heard, and a drop removes what it names.
import { describe, expect, it } from '@jest/globals';
import { createLogger } from '../../../platform/logger.ts';
import type { RouterClient } from '../../../platform/subgraph.ts';
import { createClientAuthService } from './clients.ts';
import { createTokenStateCache } from './token-cache.ts';

const CLIENT = {
  clientId: 'tsc_a',
  projectId: '11111111-1111-4111-8111-111111111111',
  tenantId: '22222222-2222-4222-8222-222222222222',
  grantTypes: ['client_credentials'],
  redirectUris: [],
  public: false,
  allowedScopes: ['orders:read'],
};

/** A tenant subgraph stand-in that counts lookups and can hold one until released. */
function fakeRouter(secret: string) {
  let calls = 0;
  let hold: Promise<void> | undefined;
  const router: RouterClient = {
    run: async (_q, vars) => {
      calls++;
      if (hold) await hold;
      if (vars.clientId !== CLIENT.clientId) return { data: { _oidcClient: null } };
      return {
        data: {
          _oidcClient: {
            ...CLIENT,
            secretValid: typeof vars.clientSecret === 'string' ? vars.clientSecret === secret : null,
          },
        },
      };
    },
  };
  return {
    router,
    calls: () => calls,
    holdNext: () => {
      let release!: () => void;
      hold = new Promise<void>((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

const opts = { allowPublic: true, requestId: 'test' };

describe('the client authentication cache', () => {
  it('asks the tenant subgraph once for the same credentials, and every time for wrong ones', async () => {
    const t = fakeRouter('right');
    const clients = createClientAuthService({ router: t.router, logger: createLogger('silent') });
    clients.follow(() => true);
    for (let i = 0; i < 3; i++)
      expect(await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts)).toMatchObject({
        projectId: CLIENT.projectId,
      });
    expect(t.calls()).toBe(1);
    for (let i = 0; i < 2; i++)
      await expect(clients.authenticate({ clientId: 'tsc_a', clientSecret: 'wrong' }, opts)).rejects.toMatchObject({
        details: { oauth_error: 'invalid_client' },
      });
    expect(t.calls()).toBe(3);
    await expect(clients.authenticate({ clientId: 'tsc_a' }, opts)).rejects.toMatchObject({
      message: expect.stringContaining('required'),
    });
    await expect(clients.authenticate({ clientId: 'tsc_nope', clientSecret: 'x' }, opts)).rejects.toMatchObject({
      details: { oauth_error: 'invalid_client' },
    });
  });

  it('does not keep a lookup that overlapped a change, and asks again after a drop', async () => {
    const t = fakeRouter('right');
    const clients = createClientAuthService({ router: t.router, logger: createLogger('silent') });
    clients.follow(() => true);
    const release = t.holdNext();
    const pending = clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    clients.drop({ clientIds: ['tsc_a'] });
    release();
    await pending;
    expect(clients.size()).toBe(0);
    await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    expect(clients.size()).toBe(1);
    clients.drop({ projectId: CLIENT.projectId });
    expect(clients.size()).toBe(0);
  });

  it('caches nothing while broadcasts are not heard', async () => {
    const t = fakeRouter('right');
    const clients = createClientAuthService({ router: t.router, logger: createLogger('silent') });
    let live = false;
    clients.follow(() => live);
    await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    expect(t.calls()).toBe(2);
    live = true;
    await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    live = false;
    await clients.authenticate({ clientId: 'tsc_a', clientSecret: 'right' }, opts);
    expect(t.calls()).toBe(4);
  });
});

describe('the client token state cache', () => {
  it('remembers a valid token only for its project and key, and forgets it by jti, project or key change', () => {
    const cache = createTokenStateCache();
    cache.follow(() => true);
    cache.remember(cache.begin(), 'j1', 'p1', 'k1');
    expect(cache.known('j1', 'p1', 'k1')).toBe(true);
    expect(cache.known('j1', 'p2', 'k1')).toBe(false);
    cache.remember(cache.begin(), 'j1', 'p1', 'k1');
    expect(cache.known('j1', 'p1', 'k2')).toBe(false);
    cache.remember(cache.begin(), 'j1', 'p1', 'k1');
    cache.remember(cache.begin(), 'j2', 'p2', 'k1');
    cache.drop({ jtis: ['j1'] });
    expect(cache.known('j1', 'p1', 'k1')).toBe(false);
    expect(cache.known('j2', 'p2', 'k1')).toBe(true);
    cache.drop({ projectId: 'p2' });
    expect(cache.known('j2', 'p2', 'k1')).toBe(false);
    cache.remember(cache.begin(), 'j3', 'p3', 'k1');
    cache.drop({ keys: true });
    expect(cache.size()).toBe(0);
  });

  it('does not keep a check that overlapped a change, nor anything while broadcasts are not heard', () => {
    const cache = createTokenStateCache();
    let live = true;
    cache.follow(() => live);
    const since = cache.begin();
    cache.drop({ jtis: ['other'] });
    cache.remember(since, 'j1', 'p1', 'k1');
    expect(cache.known('j1', 'p1', 'k1')).toBe(false);
    cache.remember(cache.begin(), 'j1', 'p1', 'k1');
    live = false;
    expect(cache.known('j1', 'p1', 'k1')).toBe(false);
    cache.remember(cache.begin(), 'j2', 'p1', 'k1');
    live = true;
    expect(cache.known('j2', 'p1', 'k1')).toBe(false);
  });
});
