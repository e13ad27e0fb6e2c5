import { describe, expect, it } from '@jest/globals';
import { execFileSync } from 'node:child_process';
import { GC_THREAD_NICE, MALLOC_TUNABLES, NODE_FLAGS, TUNED_MARK, tunedExec } from './node-tuning.ts';
import { serviceNameOf, TELEMETRY_PRELOAD } from './telemetry.ts';

const argv = ['/usr/bin/node', '/srv/tessera/main.ts', '--role', 'router'];

describe('the settings `node main.ts` re-executes itself with', () => {
  it('adds the V8 flags before the script and the malloc tunables to the environment, marking the process as tuned', () => {
    const exec = tunedExec(argv, ['--cpu-prof'], { PATH: '/bin' })!;
    expect(exec.args).toEqual([
      '/usr/bin/node',
      ...NODE_FLAGS,
      '--cpu-prof',
      '/srv/tessera/main.ts',
      '--role',
      'router',
    ]);
    expect(exec.env).toMatchObject({ PATH: '/bin', GLIBC_TUNABLES: MALLOC_TUNABLES, [TUNED_MARK]: 'GLIBC_TUNABLES' });
  });

  it('keeps what the operator chose: their own flag value and their own GLIBC_TUNABLES', () => {
    const own = tunedExec(argv, ['--max-semi-space-size=64'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })!;
    expect(own.args).toEqual([
      '/usr/bin/node',
      '--heap-growing-percent=50',
      '--max-semi-space-size=64',
      '/srv/tessera/main.ts',
      '--role',
      'router',
    ]);
    const viaOptions = tunedExec(argv, [], {
      NODE_OPTIONS: '--max-semi-space-size=32 --heap-growing-percent=100',
      GLIBC_TUNABLES: 'x=1',
    });
    expect(viaOptions).toBeNull();
    const flagsOnly = tunedExec(argv, [], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })!;
    expect(flagsOnly.env.GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=8');
    expect(flagsOnly.env[TUNED_MARK]).toBe('1');
  });

  it('preloads the OpenTelemetry SDK only when an OTLP endpoint is set', () => {
    const traced = tunedExec(argv, [], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })!;
    expect(traced.args).toEqual([
      '/usr/bin/node',
      ...NODE_FLAGS,
      '--import',
      TELEMETRY_PRELOAD,
      '/srv/tessera/main.ts',
      '--role',
      'router',
    ]);
    expect(tunedExec(argv, [], {})!.args.join(' ')).not.toMatch(/telemetry/);
    expect(
      tunedExec(argv, ['--import', TELEMETRY_PRELOAD], { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318' })!.args.filter(
        (a) => a === TELEMETRY_PRELOAD,
      ),
    ).toHaveLength(1);
    expect(serviceNameOf(argv)).toBe('tessera-router');
    expect(serviceNameOf(['node', 'main.ts', '--role', 'subgraph:data'])).toBe('tessera-data');
    expect(serviceNameOf(['node', 'main.ts'])).toBe('tessera');
  });

  it('does nothing once tuned (no re-execution loop) or when the mark is set by hand', () => {
    expect(tunedExec(argv, [], { [TUNED_MARK]: '1' })).toBeNull();
  });
});

describe("V8's helper threads", () => {
  it('run at GC_THREAD_NICE once lowered, and the event-loop thread keeps its priority', () => {
    // In a process of its own: the test runner's threads are not changed.
    const script = `
      import fs from 'node:fs';
      import { lowerHelperThreads } from ${JSON.stringify(new URL('./node-tuning.ts', import.meta.url).href)};
      const nice = (tid) => Number(fs.readFileSync('/proc/self/task/' + tid + '/stat', 'utf8').split(') ')[1].split(' ')[16]);
      const threads = () => fs.readdirSync('/proc/self/task').map((tid) => ({
        comm: fs.readFileSync('/proc/self/task/' + tid + '/comm', 'utf8').trim(), nice: nice(tid), main: Number(tid) === process.pid,
      }));
      const lowered = lowerHelperThreads();
      console.log(JSON.stringify({ lowered, threads: threads() }));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8' });
    const { lowered, threads } = JSON.parse(out) as {
      lowered: number;
      threads: { comm: string; nice: number; main: boolean }[];
    };
    const helpers = threads.filter((t) => t.comm === 'V8Worker');
    expect(helpers.length).toBeGreaterThan(0);
    expect(lowered).toBe(helpers.length);
    for (const t of helpers) expect(t.nice).toBe(GC_THREAD_NICE);
    expect(threads.find((t) => t.main)!.nice).toBe(0);
  });
});
