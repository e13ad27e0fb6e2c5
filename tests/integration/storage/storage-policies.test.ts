// The policy matrix, on the storage subgraph itself (real PostgreSQL, real filesystem blobs): who
// (API key, owner, another end-user, an end-user with a role, anonymous, another project's user)
// × operation (read, write, delete, list) × folder (public, members, own, editors, none).
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { Readable } from 'node:stream';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type { Principal, RequestContext } from '../../../platform/auth.ts';
import { loadConfig } from '../../../platform/config.ts';
import { createLogger } from '../../../platform/logger.ts';
import { startSubgraph, type RunningSubgraph } from '../../../platform/subgraph.ts';
import { blobKeyOf, createFsBlobStore, type BlobStore } from '../../../platform/blob-store/index.ts';
import { storageSubgraph } from '../../../subgraphs/storage/index.ts';
import { createTestDatabase } from '../../support/database.ts';

const PROJECT = crypto.randomUUID();
const OTHER_PROJECT = crypto.randomUUID();
const user = (userId: string, scopes: string[] = [], projectId = PROJECT): Principal => ({
  kind: 'user',
  projectId,
  userId,
  clientId: 'c',
  scopes,
  mfa: false,
});

const WHO: Record<string, Principal> = {
  key: { kind: 'project', projectId: PROJECT, tenantId: crypto.randomUUID() },
  owner: user('u-owner'),
  other: user('u-other'),
  editor: user('u-editor', ['openid', 'role:editor']),
  anonymous: { kind: 'anonymous' },
  foreign: user('u-foreign', ['role:editor'], OTHER_PROJECT),
};
const FOLDERS = ['public', 'members', 'own', 'editors', 'none'] as const;

// Expected outcomes: `ok`, or the error code.
const ALLOWED: Record<string, Record<'read' | 'write' | 'delete', (typeof FOLDERS)[number][]>> = {
  key: { read: [...FOLDERS], write: [...FOLDERS], delete: [...FOLDERS] },
  owner: { read: ['public', 'members', 'own'], write: ['members', 'own'], delete: ['own'] },
  other: { read: ['public', 'members'], write: ['members', 'own'], delete: [] },
  editor: { read: ['public', 'members', 'editors'], write: ['members', 'own', 'editors'], delete: ['editors'] },
  anonymous: { read: ['public'], write: [], delete: [] },
  foreign: { read: [], write: [], delete: [] },
};
const DENIED_CODE: Record<string, string> = {
  owner: 'FORBIDDEN',
  other: 'FORBIDDEN',
  editor: 'FORBIDDEN',
  anonymous: 'UNAUTHENTICATED',
  foreign: 'NOT_FOUND',
};

let sub: RunningSubgraph;
let blobs: BlobStore;
let dataDir: string;
let drop: () => Promise<void>;
let n = 0;

async function run(query: string, variables: Record<string, unknown>, principal: Principal) {
  const ctx: RequestContext = { requestId: `t-${++n}`, principal };
  return await sub.execute(query, variables, ctx);
}

const BEGIN =
  'mutation($input: BeginStorageUploadInput!) { _beginStorageUpload(input: $input) { id projectId maxBytes } }';
const COMPLETE =
  'mutation($id: ID!, $size: Float!, $sha256: String!) { _completeStorageUpload(id: $id, size: $size, sha256: $sha256) { id status ownerId } }';

/** Uploads the way the front door does: begin, bytes into the blob store, complete. Answers the object id or the error code. */
async function upload(
  who: Principal,
  folder: string,
  content = 'x',
  projectId?: string,
): Promise<{ id?: string; code?: string }> {
  const begin = await run(
    BEGIN,
    { input: { folder, name: `${crypto.randomUUID()}.txt`, contentType: 'text/plain', confirm: true, projectId } },
    who,
  );
  if (begin.errors) return { code: begin.errors[0]!.extensions?.code as string };
  const t = (begin.data as { _beginStorageUpload: { id: string; projectId: string } })._beginStorageUpload;
  const put = await blobs.put(blobKeyOf(t.projectId, t.id), Readable.from([Buffer.from(content)]));
  const done = await run(COMPLETE, { id: t.id, size: put.size, sha256: put.sha256 }, who);
  if (done.errors) return { code: done.errors[0]!.extensions?.code as string };
  return { id: t.id };
}

const outcome = (r: { errors?: readonly { extensions?: Record<string, unknown> }[] }) =>
  r.errors ? (r.errors[0]!.extensions?.code as string) : 'ok';

beforeAll(async () => {
  const db = await createTestDatabase();
  drop = db.drop;
  dataDir = fs.mkdtempSync(path.resolve('.tessera', 'test-data', 'storage-'));
  const config = loadConfig({ TESSERA_INTERNAL_SECRET: 'x'.repeat(40), TESSERA_DATA_DIR: dataDir });
  sub = await startSubgraph(storageSubgraph, { config, databaseUrl: db.url, logger: createLogger('silent') });
  blobs = createFsBlobStore(path.join(dataDir, 'blobs'));
  // The plan limits the router would hand over (fresh for the whole run).
  const c = new pg.Client({ connectionString: db.url });
  await c.connect();
  for (const id of [PROJECT, OTHER_PROJECT]) {
    await c.query(`insert into storage_project_limits values ($1, $2, $3, now() + interval '1 hour')`, [
      id,
      1024 ** 3,
      50 * 1024 ** 2,
    ]);
  }
  await c.end();
  const policy = 'mutation($input: StoragePolicyInput!) { createStoragePolicy(input: $input) { id } }';
  for (const input of [
    { name: 'public', folder: 'public', operations: ['read', 'list'], principal: 'public' },
    { name: 'members', folder: 'members', operations: ['read', 'list', 'write'], principal: 'authenticated' },
    { name: 'own', folder: 'own', operations: ['read', 'list', 'write', 'delete'], principal: 'owner' },
    { name: 'editors', folder: 'editors', operations: ['read', 'list', 'write', 'delete'], principal: 'role:editor' },
  ]) {
    expect(outcome(await run(policy, { input }, WHO.key!))).toBe('ok');
  }
}, 60_000);

afterAll(async () => {
  await sub?.close();
  await drop?.();
  fs.rmSync(dataDir, { recursive: true, force: true });
});

/** An object in `folder`, uploaded by the owner where the owner may write, else with the API key. */
async function objectIn(folder: string): Promise<string> {
  const by = ALLOWED.owner!.write.includes(folder as never) ? WHO.owner! : WHO.key!;
  const r = await upload(by, folder);
  if (!r.id) throw new Error(`seeding ${folder}: ${r.code}`);
  return r.id;
}

describe('the policy matrix', () => {
  for (const [name, who] of Object.entries(WHO)) {
    for (const folder of FOLDERS) {
      const expectRead = ALLOWED[name]!.read.includes(folder) ? 'ok' : DENIED_CODE[name];
      const expectWrite = ALLOWED[name]!.write.includes(folder) ? 'ok' : DENIED_CODE[name];
      const expectDelete = ALLOWED[name]!.delete.includes(folder) ? 'ok' : DENIED_CODE[name];

      it(`${name} × read × ${folder}: ${expectRead}`, async () => {
        const id = await objectIn(folder);
        expect(outcome(await run('query($id: ID!) { storageObject(id: $id) { id } }', { id }, who))).toBe(expectRead);
      });

      it(`${name} × write × ${folder}: ${expectWrite}`, async () => {
        const r = await upload(
          who,
          folder,
          'x',
          name === 'anonymous' ? PROJECT : name === 'foreign' ? PROJECT : undefined,
        );
        expect(r.code ?? 'ok').toBe(expectWrite);
        if (r.id && who.kind === 'user') {
          const owner = await run('query($id: ID!) { storageObject(id: $id) { ownerId } }', { id: r.id }, WHO.key!);
          expect(owner.data).toEqual({ storageObject: { ownerId: who.userId } });
        }
      });

      it(`${name} × delete × ${folder}: ${expectDelete}`, async () => {
        const id = await objectIn(folder);
        expect(outcome(await run('mutation($id: ID!) { deleteStorageObject(id: $id) }', { id }, who))).toBe(
          expectDelete,
        );
        const stillThere = fs.existsSync(path.join(dataDir, 'blobs', PROJECT, id));
        expect(stillThere).toBe(expectDelete !== 'ok');
      });
    }
  }

  const LIST =
    'query($projectId: ID) { storageObjects(projectId: $projectId, first: 1000) { items { folder ownerId } } }';
  const listed: Record<string, string[] | string> = {
    key: ['editors', 'members', 'none', 'own', 'public'],
    owner: ['members', 'own', 'public'],
    other: ['members', 'own', 'public'], // in `own`: only the objects `other` uploaded itself
    editor: ['editors', 'members', 'own', 'public'],
    anonymous: ['public'],
    foreign: 'NOT_FOUND',
  };
  for (const [name, who] of Object.entries(WHO)) {
    it(`${name} × list: ${Array.isArray(listed[name]) ? (listed[name] as string[]).join(', ') : listed[name]}`, async () => {
      const r = await run(LIST, { projectId: name === 'anonymous' || name === 'foreign' ? PROJECT : null }, who);
      const want = listed[name]!;
      if (typeof want === 'string') return expect(outcome(r)).toBe(want);
      expect(outcome(r)).toBe('ok');
      const items = (r.data as { storageObjects: { items: { folder: string; ownerId: string | null }[] } })
        .storageObjects.items;
      expect([...new Set(items.map((i) => i.folder))].sort()).toEqual(want);
      if (who.kind === 'user') {
        // Owner-only folders list the caller's own objects only.
        expect(items.filter((i) => i.folder === 'own').every((i) => i.ownerId === who.userId)).toBe(true);
      }
    });
  }

  it('refuses a tenant token outright', async () => {
    const tenant: Principal = { kind: 'tenant', tenantId: crypto.randomUUID(), sessionId: crypto.randomUUID() };
    expect(outcome(await run(LIST, {}, tenant))).toBe('FORBIDDEN');
    expect((await upload(tenant, 'public')).code).toBe('FORBIDDEN');
  });

  it('lets only the uploader confirm an upload into an owner-only folder', async () => {
    const begin = await run(
      BEGIN,
      { input: { folder: 'own', name: 'mine.txt', contentType: 'text/plain' } },
      WHO.owner!,
    );
    const t = (begin.data as { _beginStorageUpload: { id: string; projectId: string } })._beginStorageUpload;
    const put = await blobs.put(blobKeyOf(t.projectId, t.id), Readable.from([Buffer.from('mine')]));
    expect(outcome(await run(COMPLETE, { id: t.id, size: put.size, sha256: put.sha256 }, WHO.owner!))).toBe('ok');
    const confirm = 'mutation($id: ID!) { confirmStorageUpload(id: $id) { status } }';
    expect(outcome(await run(confirm, { id: t.id }, WHO.other!))).toBe('FORBIDDEN');
    expect(outcome(await run(confirm, { id: t.id }, WHO.anonymous!))).toBe('UNAUTHENTICATED');
    expect((await run(confirm, { id: t.id }, WHO.owner!)).data).toEqual({ confirmStorageUpload: { status: 'ready' } });
  });

  it('checks a policy content-type allow-list on write, with wildcards', async () => {
    const policy = 'mutation($input: StoragePolicyInput!) { createStoragePolicy(input: $input) { id } }';
    await run(
      policy,
      {
        input: {
          name: 'avatars',
          folder: 'avatars',
          operations: ['write'],
          principal: 'authenticated',
          contentTypes: ['image/*'],
        },
      },
      WHO.key!,
    );
    const begin = (contentType: string) =>
      run(BEGIN, { input: { folder: 'avatars/2024', name: `${crypto.randomUUID()}.bin`, contentType } }, WHO.other!);
    expect(outcome(await begin('image/png'))).toBe('ok');
    expect(outcome(await begin('image/svg+xml; charset=utf-8'))).toBe('ok');
    expect(outcome(await begin('text/html'))).toBe('UNSUPPORTED_MEDIA_TYPE');
    // The API key is not bound by policies.
    expect(
      outcome(await run(BEGIN, { input: { folder: 'avatars', name: 'x.html', contentType: 'text/html' } }, WHO.key!)),
    ).toBe('ok');
  });

  it('does not let a policy for folder `a` cover a sibling folder `ab`', async () => {
    expect((await upload(WHO.other!, 'membersX')).code).toBe('FORBIDDEN');
    expect((await upload(WHO.other!, 'members/sub/deeper')).code).toBeUndefined();
  });
});
