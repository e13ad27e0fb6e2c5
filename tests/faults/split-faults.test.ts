// Faults under load (issue 13), on loopback only and bounded in time: split mode while a subgraph process (data),
// the worker (functions: async invocations and after-hooks run there), the front door and the router are each
// killed with SIGKILL — the split launcher restarts them — and while PostgreSQL itself is restarted. This file
// starts its OWN PostgreSQL server (never the shared test server) so it may stop it.
// Asserted: every write answered 2xx is in the database afterwards; every async invocation answered 202 ran (its
// Database step's row exists) unless the killed worker had it mid-run (then it is WORKER_LOST, as documented);
// every committed row's after-hook ran at least once; callers during an outage got their answer quickly (no
// hang); service came back after PostgreSQL's return with no process restarted.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import { describe, it, expect, beforeAll, afterAll } from '@jest/globals';
import { startDatabase, type RunningDatabase } from '../../platform/database.ts';
import { createLogger } from '../../platform/logger.ts';
import { freePort } from '../../platform/net.ts';
import { PARENT_PID_ENV } from '../../platform/parent-watch.ts';
import { client } from '../support/http.ts';
import { SPLIT_START_HOOK_MS, stopProcess, TEST_SECRET } from '../support/platform.ts';
import { withSplitStartLock } from '../support/start-lock.ts';
import { waitFor } from '../support/wait-for.ts';

type Layout = {
  router: { pid: number; restarts: number };
  subgraphs: Record<string, { pid: number; restarts: number }>;
  frontDoor: { pid: number; restarts: number };
};

const base = path.resolve('.tessera', 'faults', crypto.randomBytes(4).toString('hex'));
let pgPort: number;
let pg: RunningDatabase;
let launcher: ChildProcess;
let output = '';
let url: string;
let call: ReturnType<typeof client>;
let apiKey: string;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const layout = (): Layout => JSON.parse(fs.readFileSync(path.join(base, 'data', 'split.json'), 'utf8')) as Layout;

/** Waits for `check` (a throw counts as not yet) and answers how long it took; a timeout shows the platform's output. */
async function until(check: () => Promise<boolean> | boolean, what: string, timeoutMs: number): Promise<number> {
  const started = Date.now();
  const holds = async () =>
    await Promise.resolve()
      .then(check)
      .catch(() => false);
  await waitFor(holds, { message: what, timeoutMs, intervalMs: 100 }).catch((e: Error) => {
    throw new Error(`${e.message}\n${output.slice(-3000)}`);
  });
  return Date.now() - started;
}

/** A request with a deadline: a hang past it counts as one. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
async function timed(method: string, p: string, body?: unknown): Promise<{ status: number; ms: number; body: any }> {
  const started = Date.now();
  try {
    const res = await fetch(url + p, {
      method,
      headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(30_000),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // not JSON
    }
    return { status: res.status, ms: Date.now() - started, body: parsed };
  } catch (err) {
    // Connection refused (the front door is being restarted) or the deadline.
    return { status: (err as Error).name === 'TimeoutError' ? -1 : 0, ms: Date.now() - started, body: null };
  }
}

/** The load: inserts (each fires an after-hook) and async invocations, recording what was acknowledged. */
function startLoad() {
  let next = 1;
  let stop = false;
  const written: number[] = [];
  const invoked: { k: number; executionId: string }[] = [];
  /** Invocations answered 503: promised not run, ever. */
  const refused: number[] = [];
  const failures: { status: number; ms: number }[] = [];
  const loop = async (kind: 'insert' | 'invoke') => {
    while (!stop) {
      const k = next++;
      const r =
        kind === 'insert'
          ? await timed('POST', '/v1/insert', { table: 'items', values: { k } })
          : await timed('POST', '/edge/api/v1/invoke/record?async=true', { k });
      if (r.status >= 200 && r.status < 300) {
        if (kind === 'insert') written.push(k);
        else invoked.push({ k, executionId: r.body.execution_id });
      } else {
        if (kind === 'invoke' && r.status === 503) refused.push(k);
        failures.push({ status: r.status, ms: r.ms });
        await sleep(50);
      }
    }
  };
  const loops = [loop('insert'), loop('insert'), loop('invoke')];
  return {
    written,
    invoked,
    refused,
    failures,
    stop: async () => {
      stop = true;
      await Promise.all(loops);
    },
  };
}

beforeAll(async () => {
  fs.mkdirSync(base, { recursive: true, mode: 0o755 });
  fs.chmodSync(path.dirname(base), 0o755);
  fs.chmodSync(base, 0o755);
  pgPort = await freePort();
  pg = await startDatabase({ dataDir: path.join(base, 'pg'), port: pgPort, logger: createLogger('silent') });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  // Holding the split-start lock, as a split platform starts (tests/support/start-lock.ts).
  await withSplitStartLock(async () => {
    launcher = spawn(process.execPath, [path.resolve('scripts/split.ts'), '--free-ports'], {
      env: {
        ...process.env,
        NODE_OPTIONS: '',
        PORT: String(port),
        LOG_LEVEL: 'warn',
        DATABASE_URL: pg.url,
        TESSERA_DATA_DIR: path.join(base, 'data'),
        TESSERA_INTERNAL_SECRET: TEST_SECRET,
        [PARENT_PID_ENV]: String(process.pid),
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    launcher.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    launcher.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await until(
      async () => (await fetch(`${url}/health`)).status === 200 && fs.existsSync(path.join(base, 'data', 'split.json')),
      'split mode to start',
      180_000,
    );
  });
  call = client(url);
  await call('POST', '/auth/api/v1/tenants/signup', {
    body: { email: 'faults@example.com', password: 'a long password' },
  });
  const token = (
    await call('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'faults@example.com', password: 'a long password' },
    })
  ).body.access_token;
  apiKey = (await call('POST', '/auth/api/v1/projects', { token, body: { name: 'Faults' } })).body.project.api_key;
  await until(
    async () => (await call('POST', '/v1/rawSQL', { apiKey, body: { sql: 'select 1' } })).status === 200,
    'the project database',
    30_000,
  );
  for (const sql of [
    'create table items (k int primary key)',
    'create table runs (k int)',
    'create table hooked (k int)',
  ]) {
    expect((await call('POST', '/v1/rawSQL', { apiKey, body: { sql } })).status).toBe(200);
  }
  const fn = (name: string, table: string, value: string) =>
    call('POST', '/edge/api/v1/functions', {
      apiKey,
      body: {
        name,
        steps: [{ name: 'save', kind: 'Database', query: { action: 'insert', table, values: { k: value } } }],
      },
    });
  expect((await fn('record', 'runs', '{{ input.body.k }}')).status).toBe(201);
  expect((await fn('after-item', 'hooked', '{{ input.body.row.k }}')).status).toBe(201);
  expect(
    (
      await call('POST', '/edge/api/v1/hooks', {
        apiKey,
        body: { table: 'items', timing: 'after', events: ['insert'], function: 'after-item' },
      })
    ).status,
  ).toBe(201);
}, 180_000 + SPLIT_START_HOOK_MS);

afterAll(async () => {
  if (launcher) await stopProcess(launcher);
  await pg?.stop().catch(() => {});
  fs.rmSync(base, { recursive: true, force: true });
});

describe('split mode under load, with processes killed and PostgreSQL restarted', () => {
  it('loses nothing acknowledged, answers quickly during outages, and recovers by itself', async () => {
    const load = startLoad();
    const recoveries: Record<string, number> = {};
    await until(() => load.written.length > 20 && load.invoked.length > 5, 'the load to get going', 30_000);

    // SIGKILL one process of each kind; the launcher restarts it and the load goes on.
    const roles: [string, () => number][] = [
      ['data subgraph', () => layout().subgraphs.data!.pid],
      ['functions worker', () => layout().subgraphs.functions!.pid],
      ['router', () => layout().router.pid],
      ['front door', () => layout().frontDoor.pid],
    ];
    for (const [name, pidOf] of roles) {
      const pid = pidOf();
      const before = load.written.length;
      const killedAt = Date.now();
      process.kill(pid, 'SIGKILL');
      await until(() => pidOf() !== pid, `${name} to be restarted`, 60_000);
      await until(() => load.written.length > before + 5, `writes to flow again after killing the ${name}`, 60_000);
      recoveries[name] = Date.now() - killedAt;
    }

    // PostgreSQL restarted: nobody restarts a process, and service returns once the database is back.
    const restartsBefore = JSON.stringify(layout());
    const failuresBefore = load.failures.length;
    await pg.stop();
    await until(() => load.failures.length > failuresBefore, 'requests to fail while PostgreSQL is down', 30_000);
    const failuresDuringOutage = load.failures.length - failuresBefore;
    pg = await startDatabase({ dataDir: path.join(base, 'pg'), port: pgPort, logger: createLogger('silent') });
    const before = load.written.length;
    recoveries.postgresql = await until(
      () => load.written.length > before,
      'a write to succeed after PostgreSQL came back',
      30_000,
    );
    await sleep(1500); // proves no process gets restarted: a restart would come from the launcher's own timer, nothing to wait on
    const restartsAfter = JSON.stringify(layout());
    if (restartsAfter !== restartsBefore)
      throw new Error(
        `a process was restarted while PostgreSQL restarted:\n${restartsBefore}\n${restartsAfter}\n${output.slice(-6000)}`,
      );
    expect(failuresDuringOutage).toBeGreaterThan(0);

    await load.stop();
    // Everything acknowledged must be there (hooks and queued runs may still be draining: give them time).
    const rows = async (table: string) =>
      new Set<number>(
        (
          (await call('POST', '/v1/rawSQL', { apiKey, body: { sql: `select distinct k from ${table}` } })).body
            .rows as { k: number }[]
        ).map((r) => r.k),
      );
    const items = await rows('items');
    const lostWrites = load.written.filter((k) => !items.has(k));
    expect(lostWrites).toEqual([]);
    let missingHooks: number[] = [];
    await until(
      async () => {
        const hooked = await rows('hooked');
        missingHooks = [...items].filter((k) => !hooked.has(k));
        return missingHooks.length === 0;
      },
      "every committed row's after-hook",
      150_000,
    ).catch(() => undefined);
    expect(missingHooks).toEqual([]);
    let notRun: { k: number; status: string; code?: string }[] = [];
    await until(
      async () => {
        const ran = await rows('runs');
        notRun = [];
        for (const inv of load.invoked.filter((i) => !ran.has(i.k))) {
          const e = (await call('GET', `/edge/api/v1/executions/${inv.executionId}`, { apiKey })).body.execution;
          // It ran and a step failed (its Database step met the data service or PostgreSQL away: recorded, as
          // documented, not retried), or it was cut short by the killed worker (WORKER_LOST, not run again).
          if (e?.status === 'failed' && (e.error?.step || e.error?.code === 'WORKER_LOST')) continue;
          notRun.push({ k: inv.k, status: e?.status, code: e?.error?.code });
        }
        return notRun.every((n) => n.status === 'running');
        // A job the killed worker had locked but not started runs again once its lock expires (60 s).
      },
      'every accepted async invocation to have run',
      150_000,
    ).catch(() => undefined);
    // Still `running` here only if the killed worker had claimed it (the sweep marks it WORKER_LOST later).
    expect(notRun.filter((n) => n.status !== 'running')).toEqual([]);
    // An invoke answered 503 has not run and will not run.
    const ran = await rows('runs');
    expect(load.refused.filter((k) => ran.has(k))).toEqual([]);

    // Nobody was left hanging during the outages: every request got an answer (none reached its 30 s deadline). How
    // fast the answers and the recoveries were is printed below for the record, never bounded here: a loaded machine
    // is slower, not wrong (speed lives in `npm run bench`).
    expect(load.failures.filter((f) => f.status === -1)).toEqual([]);
    // For the record (bench/RESULTS.md): recovery times, acknowledged counts, failures seen.
    console.log(
      JSON.stringify({
        recoveries_ms: recoveries,
        written: load.written.length,
        invoked: load.invoked.length,
        refused_503: load.refused.length,
        failures: load.failures.length,
        statuses: [...new Set(load.failures.map((f) => f.status))],
      }),
    );
  }, 600_000);
});
