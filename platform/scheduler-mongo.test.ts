// The scheduler on MongoDB (TESSERA_SCHEDULER_URL=mongodb://…): Agenda on @agendajs/mongo-backend with the official
// driver, run here against CongoDB, the MongoDB wire-protocol emulator of @push.rocks/smartmongo (no mongod can be
// installed on these machines; production uses a replica set). Two schedulers stand for two instances.
import path from 'node:path';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { CongoServer } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { createLogger } from './logger.ts';
import { createScheduler, type Scheduler } from './scheduler.ts';
import { isMongoUrl } from './scheduler-backend.ts';
import { PARENT_PID_ENV } from './parent-watch.ts';

let server: CongoServer;
let dbCounter = 0;
const open: Scheduler[] = [];

/** A fresh database on the emulator (the driver needs poll monitoring there, given in the URL as in production). */
function url(): string {
  const port = (server as unknown as { server: { address: () => { port: number } } }).server.address().port;
  return `mongodb://127.0.0.1:${port}/sched_${process.pid}_${dbCounter++}?serverMonitoringMode=poll&directConnection=true`;
}

function scheduler(u: string, name = 'test'): Scheduler {
  const s = createScheduler({ url: u, name, logger: createLogger('silent'), processEveryMs: 100 });
  open.push(s);
  return s;
}

async function waitFor(what: string, check: () => boolean, timeoutMs = 20_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

beforeAll(async () => {
  server = new CongoServer({ host: '127.0.0.1', port: 0 });
  await server.start();
});

afterAll(async () => {
  for (const s of open) await s.stop().catch(() => {});
  await server?.stop();
});

describe('the scheduler on MongoDB', () => {
  it('is chosen by a mongodb:// URL', () => {
    expect(isMongoUrl('mongodb://db:27017/tessera?replicaSet=rs0')).toBe(true);
    expect(isMongoUrl('mongodb+srv://cluster.example.com/tessera')).toBe(true);
    expect(isMongoUrl('postgres://u:p@db:5432/tessera')).toBe(false);
  });

  it('runs each queued job exactly once across two instances', async () => {
    const u = url();
    const runs: string[] = [];
    const [a, b] = [scheduler(u), scheduler(u)];
    for (const s of [a, b])
      s.define<{ id: string }>('test.async', async (data) => void runs.push(data.id), { lockLifetimeMs: 5000 });
    await a.start();
    await b.start();
    const ids = Array.from({ length: 20 }, (_, i) => `job-${i}`);
    for (const id of ids) await (Number(id.slice(4)) % 2 ? a : b).enqueue('test.async', { id });
    await waitFor('every job to run', () => runs.length >= ids.length);
    await new Promise((r) => setTimeout(r, 500)); // a second run would show up within a few polls
    expect([...runs].sort()).toEqual([...ids].sort());
  }, 30_000);

  it('ticks a cron job in its time zone once per tick across two instances', async () => {
    const u = url();
    const ticks: number[] = [];
    const [a, b] = [scheduler(u), scheduler(u)];
    for (const s of [a, b])
      s.define('test.cron', async () => void ticks.push(Math.floor(Date.now() / 1000)), { lockLifetimeMs: 5000 });
    await a.start();
    await b.start();
    // Both instances declare the same recurring job, as every process of a deployment does at start.
    for (const s of [a, b]) await s.agenda.every('* * * * * *', 'test.cron', {}, { timezone: 'Asia/Kolkata' });
    await waitFor('four ticks', () => ticks.length >= 4, 15_000);
    await a.stop();
    await b.stop();
    expect(new Set(ticks).size).toBe(ticks.length);
    // The time zone is honoured: 09:30 in Kolkata (UTC+05:30) is 04:00 UTC.
    const c = scheduler(u);
    c.define('test.daily', async () => {});
    await c.start();
    const job = await c.agenda.every('30 9 * * *', 'test.daily', {}, { timezone: 'Asia/Kolkata' });
    const next = new Date(job.attrs.nextRunAt!);
    expect([next.getUTCHours(), next.getUTCMinutes()]).toEqual([4, 0]);
    expect(job.attrs.repeatTimezone).toBe('Asia/Kolkata');
  }, 30_000);

  it('retries a failing job with backoff until it succeeds', async () => {
    const s = scheduler(url());
    let attempts = 0;
    let done = false;
    s.define(
      'test.flaky',
      async () => {
        attempts++;
        if (attempts < 3) throw new Error('downstream unavailable');
        done = true;
      },
      { retries: 3, lockLifetimeMs: 5000 },
    );
    await s.start();
    await s.enqueue('test.flaky', {});
    await waitFor('the third attempt to succeed', () => done, 20_000);
    expect(attempts).toBe(3);
  }, 30_000);

  it('picks up the job of a worker killed while running it, once its lock expires', async () => {
    const u = url();
    const worker = spawn(process.execPath, [path.resolve('tests/support/scheduler-worker.ts')], {
      env: { ...process.env, NODE_OPTIONS: '', SCHEDULER_URL: u, [PARENT_PID_ENV]: String(process.pid) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let out = '';
    worker.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    try {
      await waitFor('the worker to start', () => out.includes('ready'));
      const producer = scheduler(u);
      await producer.enqueue('test.slow', { id: 'orphan' });
      await waitFor('the worker to take the job', () => out.includes('started orphan'));
    } finally {
      worker.kill('SIGKILL');
    }
    await new Promise((r) => worker.once('exit', r));
    const ran: string[] = [];
    const rescuer = scheduler(u);
    rescuer.define<{ id: string }>('test.slow', async (data) => void ran.push(data.id), { lockLifetimeMs: 2000 });
    await rescuer.start();
    await waitFor('another instance to run the orphaned job', () => ran.length > 0, 20_000);
    expect(ran).toEqual(['orphan']);
  }, 40_000);

  it('renews the lock of a run with a heartbeat, so a run outliving its lock lifetime is not run again elsewhere', async () => {
    const u = url();
    const runs = { beat: 0, plain: 0 };
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    const [a, b] = [scheduler(u), scheduler(u)];
    for (const s of [a, b]) {
      s.define('test.beat', async () => void (runs.beat++, await released), {
        lockLifetimeMs: 1000,
        heartbeat: true,
        retries: 0,
      });
      s.define('test.plain', async () => void (runs.plain++, await released), { lockLifetimeMs: 1000, retries: 0 });
    }
    await a.start();
    await b.start();
    try {
      await a.enqueue('test.beat', {});
      await a.enqueue('test.plain', {});
      // Without renewal the run outlives its 1 s lock and is run again (the control: the test can fail).
      await waitFor('the unrenewed job run again', () => runs.plain >= 2);
      expect(runs.beat).toBe(1);
    } finally {
      release();
    }
  }, 30_000);
});
