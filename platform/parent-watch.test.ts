import { describe, expect, it } from '@jest/globals';
import { spawn } from 'node:child_process';
import { PARENT_PID_ENV, watchParent } from './parent-watch.ts';
import { waitFor } from '../tests/support/wait-for.ts';

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe('watchParent', () => {
  it('does nothing without TESSERA_PARENT_PID, or while the parent is the one named', async () => {
    let gone = 0;
    const stopA = watchParent(() => gone++, {}, 10);
    const stopB = watchParent(() => gone++, { [PARENT_PID_ENV]: String(process.ppid) }, 10);
    await new Promise((r) => setTimeout(r, 60)); // six checks each: proves neither calls back
    stopA();
    stopB();
    expect(gone).toBe(0);
  });

  it('calls back once when the parent is another process', async () => {
    let gone = 0;
    watchParent(() => gone++, { [PARENT_PID_ENV]: String(process.pid) }, 10); // our own pid is never our parent
    await waitFor(() => gone > 0, { intervalMs: 10, message: 'the callback' });
    await new Promise((r) => setTimeout(r, 50)); // five more checks: proves it is called only once
    expect(gone).toBe(1);
  });

  it('makes a grandchild end when its supervisor is killed outright (SIGKILL)', async () => {
    // supervisor: starts a child watching it, prints the child's pid, then waits to be killed.
    const child = `import { watchParent } from ${JSON.stringify(new URL('./parent-watch.ts', import.meta.url).pathname)};
      watchParent(() => process.exit(0), process.env, 50); setInterval(() => {}, 1000);`;
    const supervisor = `const { spawn } = require('node:child_process');
      const c = spawn(process.execPath, ['--input-type=module', '-e', ${JSON.stringify(child)}], { env: { ...process.env, ${PARENT_PID_ENV}: String(process.pid) }, stdio: 'ignore' });
      console.log(c.pid); setInterval(() => {}, 1000);`;
    const sup = spawn(process.execPath, ['-e', supervisor], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, NODE_OPTIONS: '' },
    });
    const grandchild = await new Promise<number>((resolve) =>
      sup.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim()))),
    );
    await new Promise((r) => setTimeout(r, 300)); // six checks of its parent: proves it stays while the supervisor lives
    expect(alive(grandchild)).toBe(true);
    sup.kill('SIGKILL');
    await waitFor(() => !alive(grandchild), { timeoutMs: 15_000, message: 'the grandchild to end' });
  });
});
