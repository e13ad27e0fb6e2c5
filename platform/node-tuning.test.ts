import { describe, expect, it } from '@jest/globals';
import { MALLOC_TUNABLES, NODE_FLAGS, TUNED_MARK, tunedExec } from './node-tuning.ts';

const argv = ['/usr/bin/node', '/srv/tessera/main.ts', '--role', 'router'];

describe('the settings `node main.ts` re-executes itself with', () => {
  it('adds the V8 flags before the script and the malloc tunables to the environment, marking the process as tuned', () => {
    const exec = tunedExec(argv, ['--cpu-prof'], { PATH: '/bin' })!;
    expect(exec.args).toEqual(['/usr/bin/node', ...NODE_FLAGS, '--cpu-prof', '/srv/tessera/main.ts', '--role', 'router']);
    expect(exec.env).toMatchObject({ PATH: '/bin', GLIBC_TUNABLES: MALLOC_TUNABLES, [TUNED_MARK]: 'GLIBC_TUNABLES' });
  });

  it('keeps what the operator chose: their own flag value and their own GLIBC_TUNABLES', () => {
    const own = tunedExec(argv, ['--max-semi-space-size=64'], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })!;
    expect(own.args).toEqual(['/usr/bin/node', '--heap-growing-percent=50', '--max-semi-space-size=64', '/srv/tessera/main.ts', '--role', 'router']);
    const viaOptions = tunedExec(argv, [], { NODE_OPTIONS: '--max-semi-space-size=32 --heap-growing-percent=100', GLIBC_TUNABLES: 'x=1' });
    expect(viaOptions).toBeNull();
    const flagsOnly = tunedExec(argv, [], { GLIBC_TUNABLES: 'glibc.malloc.arena_max=8' })!;
    expect(flagsOnly.env.GLIBC_TUNABLES).toBe('glibc.malloc.arena_max=8');
    expect(flagsOnly.env[TUNED_MARK]).toBe('1');
  });

  it('does nothing once tuned (no re-execution loop) or when the mark is set by hand', () => {
    expect(tunedExec(argv, [], { [TUNED_MARK]: '1' })).toBeNull();
  });
});
