// One background-job pattern (platform/jobs.ts): every subgraph's jobs are declared one file each in its jobs/,
// listed in jobs/index.ts and handed to the platform by its definition; the declarations are well formed; no job
// is defined or scheduled anywhere else.
import { describe, expect, it } from '@jest/globals';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadConfig } from '../../platform/config.ts';
import { jobListProblems, registerJobs, startJobs, type JobDeclaration, type JobList } from '../../platform/jobs.ts';
import type { JobHandler, JobOptions, Scheduler } from '../../platform/scheduler.ts';
import { SUBGRAPHS } from '../../subgraphs/index.ts';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
const config = loadConfig({});
const isDeclaration = (v: unknown): v is JobDeclaration<unknown, unknown> =>
  typeof v === 'object' &&
  v !== null &&
  typeof (v as { name?: unknown }).name === 'string' &&
  typeof (v as { handler?: unknown }).handler === 'function';

/** A scheduler that records what is defined and scheduled on it (the registration, without a database). */
function recorder() {
  const defined = new Map<string, { handler: JobHandler<unknown>; opts?: JobOptions }>();
  const every: [string, string][] = [];
  let started = 0;
  const scheduler = {
    define: (name: string, handler: JobHandler<unknown>, opts?: JobOptions) =>
      void defined.set(name, { handler, opts }),
    start: async () => void started++,
    agenda: { every: async (interval: string, name: string) => void every.push([interval, name]) },
  } as unknown as Scheduler;
  return { scheduler, defined, every, started: () => started };
}

const withJobs = fs
  .readdirSync(path.join(root, 'subgraphs'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && fs.existsSync(path.join(root, 'subgraphs', d.name, 'jobs')));

describe('every subgraph declares its jobs the same way', () => {
  it('finds the subgraphs with jobs', () => {
    expect(withJobs.map((d) => d.name).sort()).toEqual(['data', 'functions', 'identity', 'storage', 'tenant']);
  });

  for (const dir of withJobs) {
    const name = dir.name;
    describe(name, () => {
      const folder = path.join(root, 'subgraphs', name, 'jobs');
      const load = async (): Promise<JobList<unknown>> => {
        const index = (await import(path.join(folder, 'index.ts'))) as Record<string, unknown>;
        const lists = Object.values(index).filter(
          (v): v is JobList<unknown> =>
            typeof v === 'object' && v !== null && Array.isArray((v as JobList<unknown>).jobs),
        );
        expect(lists).toHaveLength(1);
        return lists[0]!;
      };

      it('its jobs/index.ts list is well formed', async () => {
        expect(jobListProblems(name, await load(), config)).toEqual([]);
      });

      it('each file of jobs/ declares jobs that the list holds, and each listed job comes from one', async () => {
        const list = await load();
        const declared: JobDeclaration<unknown, unknown>[] = [];
        for (const file of fs
          .readdirSync(folder)
          .filter((f) => f.endsWith('.ts') && f !== 'index.ts' && !f.endsWith('.test.ts'))) {
          const found = Object.values((await import(path.join(folder, file))) as Record<string, unknown>).filter(
            isDeclaration,
          );
          expect({ file, declarations: found.length }).toEqual({ file, declarations: 1 });
          declared.push(...found);
        }
        expect(new Set(list.jobs)).toEqual(new Set(declared));
      });

      it('is handed to the platform by the subgraph definition, which defines every job and schedules the recurring ones', async () => {
        const list = await load();
        const def = SUBGRAPHS[name]!;
        expect(def.jobs).toBe(list);
        const r = recorder();
        const services = { marker: name };
        registerJobs(name, r.scheduler, services, list, config);
        expect([...r.defined.keys()].sort()).toEqual(list.jobs.map((j) => j.name).sort());
        for (const job of list.jobs) {
          expect(r.defined.get(job.name)!.opts).toEqual({
            retries: job.retries,
            concurrency: job.concurrency,
            lockLifetimeMs: job.lockLifetimeMs,
            removeOnComplete: job.removeOnComplete,
            lockLimit: job.lockLimit,
            heartbeat: job.heartbeat,
          });
        }
        await startJobs(r.scheduler, list, config);
        expect(r.started()).toBe(1);
        expect(r.every.map(([, n]) => n).sort()).toEqual(
          list.jobs
            .filter((j) => j.every)
            .map((j) => j.name)
            .sort(),
        );
      });
    });
  }

  it('job names are unique across subgraphs', () => {
    const names = Object.values(SUBGRAPHS).flatMap((d) =>
      ((d.jobs as JobList<unknown> | undefined)?.jobs ?? []).map((j) => j.name),
    );
    expect(new Set(names).size).toBe(names.length);
  });

  it('a handler receives the services the platform bound, with the job data', async () => {
    const seen: unknown[] = [];
    const list: JobList<{ id: string }> = {
      jobs: [{ name: 'test.echo', handler: async (s, data) => void seen.push([s.id, data]) }],
    };
    const r = recorder();
    registerJobs('test', r.scheduler, { id: 'svc' }, list, config);
    await r.defined.get('test.echo')!.handler({ n: 1 }, {} as never);
    expect(seen).toEqual([['svc', { n: 1 }]]);
  });

  it('no job is defined or scheduled outside the jobs/ declarations', () => {
    const offenders: string[] = [];
    const walk = (d: string) => {
      for (const e of fs.readdirSync(d, { withFileTypes: true })) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) walk(p);
        else if (e.name.endsWith('.ts') && !e.name.endsWith('.test.ts')) {
          const text = fs.readFileSync(p, 'utf8');
          if (/scheduler\.define\s*[<(]|agenda\.every\s*\(/.test(text)) offenders.push(path.relative(root, p));
        }
      }
    };
    for (const d of ['subgraphs', 'rest-compat', 'router']) walk(path.join(root, d));
    expect(offenders).toEqual([]);
  });
});

describe('a malformed job list is refused', () => {
  const ok = async () => {};
  const problems = (jobs: JobDeclaration<unknown, unknown>[], pollMs?: number) =>
    jobListProblems('demo', { jobs, pollMs }, config);

  it('names each problem', () => {
    expect(problems([{ name: 'demo.a', handler: ok }])).toEqual([]);
    expect(problems([])).toEqual([expect.stringContaining('empty job list')]);
    expect(problems([{ name: 'other.a', handler: ok }])).toEqual([expect.stringContaining('start with "demo."')]);
    expect(problems([{ name: 'demo', handler: ok }])).toEqual([expect.stringContaining('dotted')]);
    expect(
      problems([
        { name: 'demo.a', handler: ok },
        { name: 'demo.a', handler: ok },
      ]),
    ).toEqual([expect.stringContaining('declared twice')]);
    expect(problems([{ name: 'demo.a', handler: undefined as never }])).toEqual([
      expect.stringContaining('no handler'),
    ]);
    expect(problems([{ name: 'demo.a', handler: ok, retries: -1 }])).toEqual([expect.stringContaining('retries')]);
    expect(problems([{ name: 'demo.a', handler: ok, concurrency: 0 }])).toEqual([
      expect.stringContaining('concurrency'),
    ]);
    expect(problems([{ name: 'demo.a', handler: ok, lockLifetimeMs: 10 }])).toEqual([
      expect.stringContaining('lockLifetimeMs'),
    ]);
    expect(problems([{ name: 'demo.a', handler: ok, every: 'often' }])).toEqual([
      expect.stringContaining('not an interval'),
    ]);
    expect(problems([{ name: 'demo.a', handler: ok, every: () => '5 minutes' }])).toEqual([]);
    expect(problems([{ name: 'demo.a', handler: ok, every: '1 minute', removeOnComplete: true }])).toEqual([
      expect.stringContaining('cannot be removed'),
    ]);
    expect(problems([{ name: 'demo.a', handler: ok }], 0)).toEqual([expect.stringContaining('pollMs')]);
  });

  it('registration throws on it, defining nothing', () => {
    const r = recorder();
    expect(() => registerJobs('demo', r.scheduler, {}, { jobs: [{ name: 'other.a', handler: ok }] }, config)).toThrow(
      /malformed jobs/,
    );
    expect(r.defined.size).toBe(0);
  });
});
