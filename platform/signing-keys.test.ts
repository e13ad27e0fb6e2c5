import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import crypto from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';
import { createTestDatabase } from '../tests/support/database.ts';
import { waitFor } from '../tests/support/wait-for.ts';
import { createSecretBox } from './crypto.ts';
import { openSubgraphDatabase, type SubgraphDatabase } from './database.ts';
import { createLogger } from './logger.ts';
import { createSigningKeyRing, derToRaw, rawToDer, type SigningKeyRingOptions } from './signing-keys.ts';

const ISSUER = 'https://issuer.test';
const box = createSecretBox('a-test-internal-secret', 'test:secrets');

describe('the signing key ring (platform/signing-keys.ts)', () => {
  let testDb: { url: string; drop: () => Promise<void> };
  let db: SubgraphDatabase;

  beforeAll(async () => {
    testDb = await createTestDatabase();
    db = await openSubgraphDatabase({
      name: 'keyring',
      url: testDb.url,
      entities: [],
      migrations: [],
      logger: createLogger('silent'),
      poolMax: 4,
    });
    for (const table of ['ring_plain', 'ring_race', 'ring_demoted', 'ring_shared']) {
      await db.em().execute(`create table ${table} (
        kid text primary key, alg text not null, public_jwk jsonb not null, private_jwk_sealed text not null,
        status text not null check (status in ('current', 'previous', 'retired')),
        created_at timestamptz not null, demoted_at timestamptz, retired_at timestamptz)`);
      await db.em().execute(`create unique index ${table}_one_current on ${table} (status) where status = 'current'`);
    }
  });
  afterAll(async () => {
    await db.close();
    await testDb.drop();
  });

  const ring = (table: string, extra: Partial<SigningKeyRingOptions> = {}) =>
    createSigningKeyRing({
      db: () => db.em(),
      table,
      lockId: 91_000_001,
      box,
      refreshMs: 60_000,
      reloadMinIntervalMs: 0,
      ...extra,
    });

  async function rows(table: string): Promise<
    {
      kid: string;
      status: string;
      alg: string;
      public_jwk: Record<string, unknown>;
      private_jwk_sealed: string;
      demoted_at: Date | null;
      retired_at: Date | null;
    }[]
  > {
    const raw = (await db.em().execute(`select * from ${table} order by created_at`)) as Record<string, unknown>[];
    const date = (v: unknown) => (v === null ? null : new Date(v as string));
    return raw.map((r) => ({ ...r, demoted_at: date(r.demoted_at), retired_at: date(r.retired_at) })) as never;
  }

  it('refuses a table name that is not a plain identifier', () => {
    expect(() => ring('keys; drop table x')).toThrow(/not a plain table name/);
  });

  it('creates one current ES256 key with a sealed private half, and signs tokens that verify', async () => {
    const keys = ring('ring_plain');
    await keys.ensureCurrent();
    await keys.ensureCurrent();
    const [row, ...more] = await rows('ring_plain');
    expect(more).toHaveLength(0);
    expect(row.status).toBe('current');
    expect(row.alg).toBe('ES256');
    expect(row.kid).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[0-9a-f]{4}-[0-9a-f]{12}$/);
    expect(row.public_jwk).toMatchObject({ kty: 'EC', crv: 'P-256', kid: row.kid, alg: 'ES256', use: 'sig' });
    expect(row.public_jwk).not.toHaveProperty('d');
    expect(row.private_jwk_sealed).toMatch(/^v1\./);
    expect(JSON.parse(box.decrypt(row.private_jwk_sealed))).toMatchObject({
      kid: row.kid,
      alg: 'ES256',
      d: expect.any(String),
    });

    const now = Math.floor(Date.now() / 1000);
    const token = await keys.sign({ sub: 'someone', iss: ISSUER, aud: 'tests', iat: now, exp: now + 60 }, 'at+jwt');
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', kid: row.kid, typ: 'at+jwt' });
    const { payload, kid } = await keys.verify(token, { issuer: ISSUER, audience: 'tests', typ: 'at+jwt' });
    expect(kid).toBe(row.kid);
    expect(payload.sub).toBe('someone');
  });

  it('refuses tokens with the wrong issuer, audience or typ, expired ones, and garbage, as INVALID_TOKEN', async () => {
    const keys = ring('ring_plain');
    const now = Math.floor(Date.now() / 1000);
    const token = await keys.sign({ sub: 'x', iss: ISSUER, aud: 'tests', iat: now - 120, exp: now - 60 }, 'JWT');
    const fresh = await keys.sign({ sub: 'x', iss: ISSUER, aud: 'tests', iat: now, exp: now + 60 }, 'JWT');
    const invalid = { code: 'INVALID_TOKEN' };
    await expect(keys.verify(token, { issuer: ISSUER })).rejects.toMatchObject(invalid);
    expect((await keys.verify(token, { issuer: ISSUER, allowExpired: true })).payload.sub).toBe('x');
    await expect(keys.verify(fresh, { issuer: 'https://other.test' })).rejects.toMatchObject(invalid);
    await expect(keys.verify(fresh, { issuer: ISSUER, audience: 'others' })).rejects.toMatchObject(invalid);
    await expect(keys.verify(fresh, { issuer: ISSUER, typ: 'at+jwt' })).rejects.toMatchObject(invalid);
    await expect(keys.verify('not.a.jwt', { issuer: ISSUER })).rejects.toMatchObject(invalid);
    await expect(keys.verify(fresh.slice(0, -4) + 'AAAA', { issuer: ISSUER })).rejects.toMatchObject(invalid);
    // Signed by a ring over another table: its kid is unknown here.
    const stranger = ring('ring_shared');
    const foreign = await stranger.sign({ iss: ISSUER, exp: now + 60 }, 'JWT');
    await expect(keys.verify(foreign, { issuer: ISSUER })).rejects.toMatchObject(invalid);
  });

  it('speaks standard JWS: jose verifies its tokens with the published key, and it verifies tokens jose signs', async () => {
    const keys = ring('ring_plain');
    await keys.ensureCurrent();
    const [row] = (await rows('ring_plain')).filter((r) => r.status === 'current');
    const now = Math.floor(Date.now() / 1000);
    for (let i = 0; i < 20; i++) {
      const token = await keys.sign(
        { sub: `s${i}`, iss: ISSUER, aud: 'tests', iat: now, exp: now + 60, amr: ['pwd'], name: 'Zoë ✓' },
        'at+jwt',
      );
      const { payload, protectedHeader } = await jwtVerify(token, await importJWK(row.public_jwk as JWK, 'ES256'), {
        issuer: ISSUER,
        audience: 'tests',
        typ: 'at+jwt',
      });
      expect(payload).toMatchObject({ sub: `s${i}`, name: 'Zoë ✓' });
      expect(protectedHeader).toEqual({ alg: 'ES256', kid: row.kid, typ: 'at+jwt' });
    }
    const privateKey = await importJWK(JSON.parse(box.decrypt(row.private_jwk_sealed)) as JWK, 'ES256');
    const byJose = await new SignJWT({ sub: 'from-jose', iss: ISSUER, exp: now + 60 })
      .setProtectedHeader({ alg: 'ES256', kid: row.kid, typ: 'JWT' })
      .sign(privateKey);
    expect((await keys.verify(byJose, { issuer: ISSUER, typ: 'JWT' })).payload.sub).toBe('from-jose');
  });

  it('signs concurrent requests in one batch, each with its own ring key, every token verifiable by jose', async () => {
    const plain = ring('ring_plain');
    const shared = ring('ring_shared');
    await Promise.all([plain.ensureCurrent(), shared.ensureCurrent()]);
    const [plainRow] = (await rows('ring_plain')).filter((r) => r.status === 'current');
    const [sharedRow] = (await rows('ring_shared')).filter((r) => r.status === 'current');
    const now = Math.floor(Date.now() / 1000);
    // Asked for in the same turn of the event loop: they are queued and signed together.
    const tokens = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        (i % 2 ? shared : plain).sign({ sub: `b${i}`, iss: ISSUER, aud: 'tests', iat: now, exp: now + 60 }, 'at+jwt'),
      ),
    );
    expect(new Set(tokens).size).toBe(30);
    for (const [i, token] of tokens.entries()) {
      const row = i % 2 ? sharedRow : plainRow;
      const { payload, protectedHeader } = await jwtVerify(token, await importJWK(row.public_jwk as JWK, 'ES256'), {
        issuer: ISSUER,
        audience: 'tests',
        typ: 'at+jwt',
      });
      expect(payload.sub).toBe(`b${i}`);
      expect(protectedHeader.kid).toBe(row.kid);
    }
  });

  it('accepts only what it signs: ES256 with a known kid, no crit, a 64-byte signature, an object with an expiry', async () => {
    const keys = ring('ring_plain');
    await keys.ensureCurrent();
    const now = Math.floor(Date.now() / 1000);
    const good = await keys.sign({ sub: 'x', iss: ISSUER, exp: now + 60 }, 'JWT');
    const [h, p, sig] = good.split('.') as [string, string, string];
    const header = JSON.parse(Buffer.from(h, 'base64url').toString()) as Record<string, unknown>;
    const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
    const invalid = { code: 'INVALID_TOKEN' };
    for (const bad of [
      `${enc({ ...header, alg: 'none' })}.${p}.`,
      `${enc({ ...header, alg: 'none' })}.${p}.${sig}`,
      `${enc({ ...header, alg: 'HS256' })}.${p}.${sig}`,
      `${enc({ ...header, crit: ['exp'] })}.${p}.${sig}`,
      `${enc({ alg: 'ES256', typ: 'JWT' })}.${p}.${sig}`,
      `${h}.${p}.${Buffer.from(sig, 'base64url').subarray(0, 63).toString('base64url')}`,
      `${h}.${p}.${sig}=`,
      `${h}.${p}.${sig}.extra`,
      `${h}.${enc({ sub: 'y', iss: ISSUER, exp: now + 60 })}.${sig}`,
      `${h}.${p}.${crypto.randomBytes(64).toString('base64url')}`,
      'a'.repeat(20_000),
    ]) {
      await expect(keys.verify(bad, { issuer: ISSUER })).rejects.toMatchObject(invalid);
    }
    const signedWithout = async (payload: object | string) => {
      const input = `${h}.${Buffer.from(typeof payload === 'string' ? payload : JSON.stringify(payload)).toString('base64url')}`;
      const { private_jwk_sealed } = (await rows('ring_plain')).find((r) => r.status === 'current')!;
      const key = crypto.createPrivateKey({
        key: JSON.parse(box.decrypt(private_jwk_sealed)) as crypto.JsonWebKey,
        format: 'jwk',
      });
      return `${input}.${crypto.sign('sha256', Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url')}`;
    };
    // Correctly signed, but not a claims set we accept.
    await expect(
      keys.verify(await signedWithout({ sub: 'no-exp', iss: ISSUER }), { issuer: ISSUER }),
    ).rejects.toMatchObject(invalid);
    await expect(
      keys.verify(await signedWithout({ iss: ISSUER, exp: String(now + 60) }), { issuer: ISSUER }),
    ).rejects.toMatchObject(invalid);
    await expect(
      keys.verify(await signedWithout({ iss: ISSUER, exp: now + 60, nbf: now + 600 }), { issuer: ISSUER }),
    ).rejects.toMatchObject(invalid);
    await expect(keys.verify(await signedWithout('[1,2]'), { issuer: ISSUER })).rejects.toMatchObject(invalid);
    expect(
      (
        await keys.verify(await signedWithout({ iss: ISSUER, exp: now + 60, aud: ['a', 'tests'] }), {
          issuer: ISSUER,
          audience: 'tests',
        })
      ).payload.aud,
    ).toEqual(['a', 'tests']);
  });

  it('checks a token it verified before again for expiry, typ and issuer, and hands out a read-only payload', async () => {
    const keys = ring('ring_plain');
    await keys.ensureCurrent();
    const now = Math.floor(Date.now() / 1000);
    const expired = await keys.sign({ sub: 'x', iss: ISSUER, iat: now - 120, exp: now - 60 }, 'JWT');
    expect((await keys.verify(expired, { issuer: ISSUER, allowExpired: true })).payload.sub).toBe('x');
    await expect(keys.verify(expired, { issuer: ISSUER })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    const fresh = await keys.sign({ sub: 'x', iss: ISSUER, exp: now + 60, amr: ['pwd'] }, 'JWT');
    const { payload } = await keys.verify(fresh, { issuer: ISSUER });
    expect(() => ((payload as Record<string, unknown>).sub = 'changed')).toThrow(TypeError);
    expect(() => (payload.amr as string[]).push('otp')).toThrow(TypeError);
    await expect(keys.verify(fresh, { issuer: ISSUER, typ: 'at+jwt' })).rejects.toMatchObject({
      code: 'INVALID_TOKEN',
    });
    await expect(keys.verify(fresh, { issuer: 'https://other.test' })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect((await keys.verify(fresh, { issuer: ISSUER })).payload.sub).toBe('x');
  });

  it('converts ECDSA signatures between DER and r||s exactly, short integers included', () => {
    const { privateKey, publicKey } = crypto.generateKeyPairSync('ec', { namedCurve: 'P-256' });
    // Short encodings (r or s with leading zero bytes) come about once in ~150 signatures: run until a few were seen.
    let short = 0;
    for (let i = 0; i < 1000 || (short < 3 && i < 50_000); i++) {
      const data = crypto.randomBytes(16);
      const der = crypto.sign('sha256', data, privateKey);
      if (der.length < 70) short++;
      const raw = derToRaw(der);
      expect(raw.length).toBe(64);
      expect(crypto.verify('sha256', data, { key: publicKey, dsaEncoding: 'ieee-p1363' }, raw)).toBe(true);
      expect(rawToDer(raw).equals(der)).toBe(true);
    }
    expect(short).toBeGreaterThan(0);
    expect(() => derToRaw(Buffer.from([0x31, 0x00]))).toThrow();
  });

  it('creates a single current key when several instances start at once (advisory lock)', async () => {
    await Promise.all([ring('ring_race'), ring('ring_race'), ring('ring_race')].map((k) => k.ensureCurrent()));
    expect((await rows('ring_race')).map((r) => r.status)).toEqual(['current']);
  });

  it('without keepPreviousForMs, rotation keeps the old key verifying until the next rotation retires it', async () => {
    const keys = ring('ring_plain');
    const exp = Math.floor(Date.now() / 1000) + 60;
    const first = await keys.sign({ iss: ISSUER, exp }, 'JWT');
    const second = await keys.rotate();
    expect(decodeProtectedHeader(await keys.sign({ iss: ISSUER, exp }, 'JWT')).kid).toBe(second);
    expect((await keys.verify(first, { issuer: ISSUER })).kid).toBe(decodeProtectedHeader(first).kid);
    const rotatedFrom = Date.now();
    const third = await keys.rotate();
    const rotatedBy = Date.now();
    const after = await rows('ring_plain');
    expect(after.map((r) => [r.kid, r.status])).toEqual([
      [decodeProtectedHeader(first).kid, 'retired'],
      [second, 'previous'],
      [third, 'current'],
    ]);
    // Stamped during the rotation (one clock: the server runs on this machine; 5 ms for PostgreSQL's rounding).
    expect((after[0].retired_at as Date).getTime()).toBeGreaterThanOrEqual(rotatedFrom - 5);
    expect((after[0].retired_at as Date).getTime()).toBeLessThanOrEqual(rotatedBy + 5);
    expect(after[1].demoted_at).toBeNull();
    await expect(keys.verify(first, { issuer: ISSUER })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });

  it('with keepPreviousForMs, rotation retires only the previous keys demoted longer ago than that', async () => {
    const keys = ring('ring_demoted', { keepPreviousForMs: 60_000 });
    await keys.ensureCurrent();
    const a = (await rows('ring_demoted'))[0].kid;
    const rotatedFrom = Date.now();
    const b = await keys.rotate();
    const rotatedBy = Date.now();
    const c = await keys.rotate();
    let now = await rows('ring_demoted');
    expect(now.map((r) => [r.kid, r.status])).toEqual([
      [a, 'previous'],
      [b, 'previous'],
      [c, 'current'],
    ]);
    expect((now[0].demoted_at as Date).getTime()).toBeGreaterThanOrEqual(rotatedFrom - 5);
    expect((now[0].demoted_at as Date).getTime()).toBeLessThanOrEqual(rotatedBy + 5);
    await db.em().execute(`update ring_demoted set demoted_at = now() - interval '2 minutes' where kid = ?`, [a]);
    const d = await keys.rotate();
    now = await rows('ring_demoted');
    expect(now.map((r) => [r.kid, r.status])).toEqual([
      [a, 'retired'],
      [b, 'previous'],
      [c, 'previous'],
      [d, 'current'],
    ]);
  });

  it('sees a rotation made by another instance: an unknown kid and the periodic refresh re-read the keys', async () => {
    const a = ring('ring_shared', { refreshMs: 300, reloadMinIntervalMs: 60_000 });
    const b = ring('ring_shared');
    await a.ensureCurrent();
    await b.ensureCurrent();
    const exp = Math.floor(Date.now() / 1000) + 60;
    const oldKid = decodeProtectedHeader(await a.sign({ iss: ISSUER, exp }, 'JWT')).kid;
    const newKid = await b.rotate();
    const byB = await b.sign({ iss: ISSUER, exp }, 'JWT');
    // Within reloadMinIntervalMs an unknown kid does not re-read; a stale cache does.
    await expect(a.verify(byB, { issuer: ISSUER })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
    expect(decodeProtectedHeader(await a.sign({ iss: ISSUER, exp }, 'JWT')).kid).toBe(oldKid);
    // Once its cache is older than refreshMs (300 ms), the next use re-reads it.
    const verified = await waitFor(() => a.verify(byB, { issuer: ISSUER }).catch(() => undefined), {
      message: "A's cache to be re-read",
    });
    expect(verified.kid).toBe(newKid);
    const signed = await a.sign({ iss: ISSUER, exp, n: 1 }, 'JWT');
    expect(decodeProtectedHeader(signed).kid).toBe(newKid);
    expect(decodeJwt(signed).n).toBe(1);

    // With reloadMinIntervalMs 0, an unknown kid re-reads at once.
    const c = ring('ring_shared');
    await c.ensureCurrent();
    const newer = await b.rotate();
    expect((await c.verify(await b.sign({ iss: ISSUER, exp }, 'JWT'), { issuer: ISSUER })).kid).toBe(newer);
  });

  it('reload() drops a key whose status the caller changed', async () => {
    const keys = ring('ring_shared', { reloadMinIntervalMs: 60_000 });
    await keys.ensureCurrent();
    const exp = Math.floor(Date.now() / 1000) + 60;
    const token = await keys.sign({ iss: ISSUER, exp }, 'JWT');
    await keys.rotate();
    await keys.verify(token, { issuer: ISSUER });
    await db
      .em()
      .execute(`update ring_shared set status = 'retired' where kid = ?`, [decodeProtectedHeader(token).kid]);
    await keys.verify(token, { issuer: ISSUER });
    await keys.reload();
    await expect(keys.verify(token, { issuer: ISSUER })).rejects.toMatchObject({ code: 'INVALID_TOKEN' });
  });
});
