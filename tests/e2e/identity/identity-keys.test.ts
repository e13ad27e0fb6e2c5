// Signing-key rotation (`npm run keys:rotate`): a rotated-out key stays published and keeps verifying
// its tokens; once retired it leaves /jwks.json and its tokens are refused everywhere at once.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { decodeProtectedHeader } from 'jose';
import { runKeyCommand } from '../../../scripts/keys-rotate.ts';
import { TEST_SECRET } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { newProject, postForm, startIdentityPlatform, type Project } from './identity-fixtures.ts';
import { waitFor } from '../../support/wait-for.ts';

let env: Awaited<ReturnType<typeof startIdentityPlatform>>;
let project: Project;
let keyEnv: Record<string, string>;

beforeAll(async () => {
  env = await startIdentityPlatform();
  project = await newProject(env.base);
  keyEnv = {
    DATABASE_URL: env.platform.tessera!.config.databaseUrl!,
    TESSERA_INTERNAL_SECRET: TEST_SECRET,
    TESSERA_DATA_DIR: env.platform.dataDir,
    LOG_LEVEL: 'silent',
  };
}, 60_000);

afterAll(async () => {
  await env?.close();
});

const clientToken = async () =>
  (
    await postForm(
      env.base,
      '/token',
      { grant_type: 'client_credentials' },
      { basic: [project.clientId, project.clientSecret] },
    )
  ).body.access_token as string;
const jwks = async () =>
  (
    (await client(env.base)('GET', '/jwks.json')).body.keys as { kid: string; kty: string; alg: string; crv: string }[]
  ).map((k) => k.kid);
const active = async (token: string) =>
  (await postForm(env.base, '/introspect', { token }, { basic: [project.clientId, project.clientSecret] })).body
    .active as boolean;

describe('signing keys', () => {
  it('publishes an ES256 key with a kid that signs the tokens', async () => {
    const res = await client(env.base)('GET', '/jwks.json');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/jwk-set+json');
    expect(res.body.keys).toHaveLength(1);
    expect(res.body.keys[0]).toMatchObject({ kty: 'EC', crv: 'P-256', alg: 'ES256', use: 'sig' });
    expect(res.body.keys[0]).not.toHaveProperty('d');
    expect(decodeProtectedHeader(await clientToken()).kid).toBe(res.body.keys[0].kid);
  });

  it('rotates: the old key stays published and verifying; once retired, its tokens stop working at once', async () => {
    const [k1] = await jwks();
    const t1 = await clientToken();
    const keys = await runKeyCommand({ action: 'rotate' }, keyEnv);
    const k2 = keys.find((k) => k.status === 'current')!.kid;
    expect(keys.find((k) => k.kid === k1)!.status).toBe('previous');
    expect(await jwks()).toEqual([k2, k1]);
    // Retiring a key that other instances may still sign with is refused for a short grace period (10 s from the
    // rotation: asked right after it, so that no machine is too slow for the refusal to be due).
    await expect(runKeyCommand({ action: 'retire', kid: k1! }, keyEnv)).rejects.toThrow(/retire it after/);
    expect(await active(t1)).toBe(true);

    // Within a few seconds every instance signs with the new key (one refresh, every 5 s, and its query).
    const t2 = await waitFor(
      async () => {
        const t = await clientToken();
        return decodeProtectedHeader(t).kid === k2 && t;
      },
      { timeoutMs: 15_000, intervalMs: 200, message: 'tokens signed with the new key' },
    );

    const notYet = (e: Error) => (/retire it after/.test(e.message) ? false : Promise.reject(e));
    await waitFor(() => runKeyCommand({ action: 'retire', kid: k1! }, keyEnv).then(() => true, notYet), {
      timeoutMs: 20_000,
      intervalMs: 250,
      message: 'the grace period to end',
    });
    expect(await jwks()).toEqual([k2]);
    expect(await active(t1)).toBe(false);
    const refused = await client(env.base)('POST', '/graphql', {
      token: t1,
      body: { query: '{ identitySigningKeys { kid } }' },
    });
    expect(refused.status).toBe(401);
    expect(await active(t2)).toBe(true);
    await expect(runKeyCommand({ action: 'retire', kid: k2 }, keyEnv)).rejects.toThrow(/current key cannot be retired/);
  }, 40_000);

  it('runs as a command line: npm run keys:rotate -- --list', () => {
    const out = spawnSync(process.execPath, [path.resolve('scripts/keys-rotate.ts'), '--list'], {
      env: { ...process.env, ...keyEnv, NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    expect(out.status).toBe(0);
    expect(out.stdout).toMatch(/current/);
    expect(out.stdout).toMatch(/retired/);
    const bad = spawnSync(process.execPath, [path.resolve('scripts/keys-rotate.ts'), '--retire', 'no-such-kid'], {
      env: { ...process.env, ...keyEnv, NODE_OPTIONS: '' },
      encoding: 'utf8',
    });
    expect(bad.status).toBe(1);
    expect(bad.stderr).toMatch(/not found/);
  });
});
