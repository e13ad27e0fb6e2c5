// A connection the server drops while a pool client is checked out (between two queries) must not end the process
// (CI saw the data subgraph's process exit during a PostgreSQL restart, tests/faults/split-faults.test.ts). Each
// case runs in a child process: a plain pg.Pool, to show the crash is real, and platform/pg-pool.ts.
import path from 'node:path';
import { spawn } from 'node:child_process';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { createTestDatabase } from '../../support/database.ts';

const helper = path.resolve('platform/pg-pool.ts');

/** The script: checks a client out, has its backend terminated from another connection, then tries to use it. */
const script = (kind: 'plain' | 'helper') => `
import pg from 'pg';
import { createPgPool } from ${JSON.stringify(helper)};
const url = process.env.TEST_DATABASE_URL;
const pool = ${kind === 'plain' ? "new pg.Pool({ connectionString: url, max: 2 }); pool.on('error', () => {})" : "createPgPool({ connectionString: url, max: 2 }, { warn: () => {} }, 'test')"};
const held = await pool.connect();
const { rows } = await held.query('select pg_backend_pid() as pid');
const killer = new pg.Client({ connectionString: url });
await killer.connect();
await killer.query('select pg_terminate_backend($1)', [rows[0].pid]);
await killer.end();
// Wait until the client has seen its socket close (the plain pool's process dies right there).
const stream = held.connection.stream;
if (!stream.destroyed) await new Promise((r) => stream.once('close', r));
let next = 'answered';
try { await held.query('select 1'); } catch (err) { next = 'refused: ' + err.message; }
held.release(true);
const again = await pool.query('select 2 as n');
console.log(JSON.stringify({ next, again: again.rows[0].n }));
await pool.end();
`;

function run(kind: 'plain' | 'helper', url: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--input-type=module', '-e', script(kind)], {
      env: { ...process.env, TEST_DATABASE_URL: url, NODE_OPTIONS: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.on('exit', (code) => resolve({ code, out }));
  });
}

describe('pools whose connections the server drops', () => {
  let db: Awaited<ReturnType<typeof createTestDatabase>>;
  beforeAll(async () => {
    db = await createTestDatabase();
  }, 60_000);
  afterAll(async () => {
    await db?.drop();
  }, 60_000);

  it('a plain pg.Pool dies of a checked-out client losing its connection (the failure this guards against)', async () => {
    const { code, out } = await run('plain', db.url);
    expect(code).not.toBe(0);
    expect(out).toMatch(/terminating connection|Connection terminated/);
  }, 30_000);

  it('createPgPool keeps the process: the held client refuses its next query, the pool answers with a new one', async () => {
    const { code, out } = await run('helper', db.url);
    expect({ code, out }).toEqual({ code: 0, out: expect.stringContaining('"again":2') as unknown as string });
    const answer = JSON.parse(out.trim().split('\n').pop()!) as { next: string; again: number };
    expect(answer.next).toMatch(/^refused: /);
  }, 30_000);
});
