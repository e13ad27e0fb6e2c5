// The front door streams object bytes itself, so it must open the storage subgraph's blob store: a split deployment
// whose storage instances use S3 and a front door started on the filesystem (issue 29: that front door answered 404
// for objects uploaded elsewhere and 409 on upload) is refused at start, with a message naming the store it opened.
// A front door with the same S3 settings starts and serves what the other front door stored.
import fs from 'node:fs';
import path from 'node:path';
import { spawn, type ChildProcess } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import {
  SPLIT_START_HOOK_MS,
  startProcess,
  startSplit,
  stopProcess,
  tmpDataDir,
  TEST_SECRET,
  type TestPlatform,
} from '../../support/platform.ts';
import { startS3, type TestS3 } from '../../support/s3.ts';
import { waitFor } from '../../support/wait-for.ts';
import { PARENT_PID_ENV } from '../../../platform/parent-watch.ts';
import { freePort } from '../../../platform/net.ts';
import { download, newStorageProject, put } from './storage-fixtures.ts';

type Layout = { router: { url: string }; subgraphs: Record<string, { url: string }> };

describe('a front door whose blob store is not the storage subgraph’s', () => {
  let s3: TestS3;
  let p: TestPlatform;
  let layout: Layout;
  const extra: ChildProcess[] = [];
  const dirs: string[] = [];

  beforeAll(async () => {
    s3 = await startS3('shared-blobs');
    p = await startSplit(s3.env);
    layout = JSON.parse(fs.readFileSync(path.join(p.dataDir, 'split.json'), 'utf8')) as Layout;
  }, SPLIT_START_HOOK_MS);
  afterAll(async () => {
    for (const c of extra) await stopProcess(c);
    await p?.close();
    await s3?.close();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  }, 60_000);

  /** The environment of one more front door of this deployment, with its own data folder. */
  const frontDoorEnv = async (blobs: Record<string, string>) => {
    const dataDir = tmpDataDir();
    dirs.push(dataDir);
    return {
      PORT: String(await freePort()),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'info',
      DATABASE_URL: p.databaseUrl,
      TESSERA_DATA_DIR: dataDir,
      TESSERA_INTERNAL_SECRET: TEST_SECRET,
      TESSERA_ROUTER_URL: layout.router.url,
      TESSERA_SUBGRAPH_URLS: Object.entries(layout.subgraphs)
        .map(([name, s]) => `${name}=${s.url}`)
        .join(','),
      ...blobs,
    };
  };

  it('refuses to start a front door on the fs driver while the storage instances use S3, saying why', async () => {
    const env = await frontDoorEnv({ TESSERA_STORAGE_DRIVER: 'fs' });
    const child = spawn(process.execPath, ['main.ts', '--role', 'front-door'], {
      env: { ...process.env, ...env, NODE_OPTIONS: '', [PARENT_PID_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    extra.push(child);
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(() => child.exitCode !== null, { timeoutMs: 60_000, intervalMs: 100, message: 'front door exit' });
    expect(child.exitCode).not.toBe(0);
    expect(output).toContain(
      `this front door's blob store (fs folder ${path.join(env.TESSERA_DATA_DIR, 'blobs')}) is not the storage subgraph's`,
    );
    expect(output).toMatch(/give every front door the same blob store settings as the storage instances/);
    // It never listened.
    expect(
      await fetch(`http://127.0.0.1:${env.PORT}/livez`).then(
        () => 'answered',
        () => 'refused',
      ),
    ).toBe('refused');
    // No credentials in the message.
    expect(output).not.toContain(s3.env.TESSERA_S3_SECRET_ACCESS_KEY!);
  }, 90_000);

  it('starts a front door with the same S3 settings, which serves bytes the other front door stored', async () => {
    const env = await frontDoorEnv(s3.env);
    const child = await startProcess(['main.ts', '--role', 'front-door'], env, `http://127.0.0.1:${env.PORT}/livez`);
    extra.push(child);
    const second = `http://127.0.0.1:${env.PORT}`;
    const project = await newStorageProject(p.url);
    const content = 'stored through one front door, read through another';
    const id = (await put(p.url, project, 'docs', 'shared.txt', content, { confirm: true })).body.object.id as string;
    const got = await download(second, id, { apiKey: project.apiKey });
    expect([got.status, got.bytes.toString()]).toEqual([200, content]);
    // And the other way round.
    const back = (await put(second, project, 'docs', 'back.txt', 'the other way', { confirm: true })).body.object
      .id as string;
    expect((await download(p.url, back, { apiKey: project.apiKey })).bytes.toString()).toBe('the other way');
    // The id is the front door's question only: not in the public API, for a project key or anyone.
    for (const headers of [{}, { 'x-api-key': project.apiKey }] as Record<string, string>[]) {
      const res = await fetch(`${second}/graphql`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify({ query: '{ _blobStoreId }' }),
      });
      const body = (await res.json()) as { data?: unknown; errors?: { message: string }[] };
      expect(body.data ?? null).toBeNull();
      expect(body.errors?.[0]?.message).toMatch(/_blobStoreId/);
    }
  }, 120_000);
});
