// A platform reaches beyond its own machine only when a tenant's function or an operator's setting asks it to:
// started, serving and stopped with nothing configured to go out, it opens no connection but to loopback. Found
// when this was first checked: `@apollo/gateway` probed the cloud metadata services (169.254.169.254,
// 100.100.100.200, metadata.google.internal) at start and reported to Apollo's usage service at stop
// (router/gateway-data-collection.ts). Every TCP connection the process starts is noted by a preload
// (tests/support/outbound-recorder.ts), which is itself checked first, so this test can fail.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HeaderMap } from '@apollo/server';
import { startOneProcess, startProcess, stopProcess, TEST_SECRET, tmpDataDir } from '../support/platform.ts';
import { createTestDatabase } from '../support/database.ts';
import { client } from '../support/http.ts';
import { freePort } from '../../platform/net.ts';

const RECORDER = path.resolve('tests/support/outbound-recorder.ts');
const noted = (file: string) => (fs.existsSync(file) ? fs.readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

describe('connections a platform opens by itself', () => {
  let db: { url: string; drop: () => Promise<void> };
  let dataDir: string;
  const files: string[] = [];
  const recordFile = () => {
    const f = path.join(dataDir, `outbound-${files.length}.txt`);
    files.push(f);
    return f;
  };

  beforeAll(async () => {
    db = await createTestDatabase();
    dataDir = tmpDataDir();
  });
  afterAll(async () => {
    await db?.drop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('notes a connection beyond loopback (the recorder works)', () => {
    const record = recordFile();
    const r = spawnSync(
      process.execPath,
      [
        '--import',
        RECORDER,
        '-e',
        "const net = require('node:net'); net.connect(9, '192.0.2.1').on('error', () => {}).destroy(); net.connect({ host: '127.0.0.1', port: 9 }).on('error', () => {}).destroy();",
      ],
      { env: { ...process.env, NODE_OPTIONS: '', OUTBOUND_RECORD: record }, encoding: 'utf8' },
    );
    expect(r.status).toBe(0);
    expect(noted(record)).toEqual(['192.0.2.1:9']);
  });

  it('opens none beyond loopback while it starts, serves through the router and stops', async () => {
    const record = recordFile();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    const child = await startProcess(
      ['--import', RECORDER, path.resolve('main.ts')],
      {
        PORT: String(port),
        DATABASE_URL: db.url,
        TESSERA_DATA_DIR: path.join(dataDir, 'platform'),
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        LOG_LEVEL: 'warn',
        OUTBOUND_RECORD: record,
        // An operator's Apollo Studio credentials in the environment turn no reporting on either.
        APOLLO_KEY: 'service:tessera-test:0123456789abcdef',
        APOLLO_GRAPH_REF: 'tessera-test@current',
      },
      `${url}/health`,
    );
    try {
      const call = client(url);
      // A GraphQL operation through the gateway, and a REST one.
      const gql = await call('POST', '/graphql', { body: { query: '{ __typename }' } });
      expect(gql).toMatchObject({ status: 200, body: { data: { __typename: 'Query' } } });
      expect((await call('GET', '/.well-known/openid-configuration')).status).toBe(200);
    } finally {
      await stopProcess(child);
    }
    expect(child.exitCode ?? child.signalCode).not.toBeNull();
    expect(noted(record)).toEqual([]);
  }, 120_000);

  it("gives a browser no page that loads from Apollo's CDN at the router's own /graphql (split mode's router process)", async () => {
    // The front door answers a browser with GraphiQL from the package; the router's Apollo Server would have served
    // its landing page, which loads Apollo Sandbox from embeddable-sandbox.cdn.apollographql.com.
    const p = await startOneProcess();
    try {
      const headers = new HeaderMap([['accept', 'text/html']]);
      const res = await p.tessera!.router.apollo.executeHTTPGraphQLRequest({
        httpGraphQLRequest: { method: 'GET', headers, search: '', body: undefined },
        context: async () => ({ requestId: 'browser', principal: { kind: 'anonymous' } }),
      });
      const body = res.body.kind === 'complete' ? res.body.string : '';
      expect(body).not.toMatch(/apollographql\.com|<html/i);
      expect(res.status).toBe(400);
    } finally {
      await p.close();
    }
  }, 60_000);
});
