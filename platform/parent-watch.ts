// A process started by a supervisor (the split-mode launcher, a test harness) ends itself when the supervisor is
// gone, even if the supervisor was killed without a chance to stop it (SIGKILL, a crash): the supervisor sets
// TESSERA_PARENT_PID to its own pid in the child's environment, and the child checks once a second that its parent
// is still that process (an orphan is re-parented, so `process.ppid` changes). Without it, a killed launcher left
// every subgraph, the router and the front door running, holding ports and database connections.

/** The environment variable a supervisor sets to its pid. */
export const PARENT_PID_ENV = 'TESSERA_PARENT_PID';

/** Calls `onGone` once when the process named by TESSERA_PARENT_PID is no longer this process's parent. */
export function watchParent(onGone: () => void, env: NodeJS.ProcessEnv = process.env, intervalMs = 1000): () => void {
  const expected = Number(env[PARENT_PID_ENV]);
  if (!Number.isInteger(expected) || expected <= 1) return () => {};
  const timer = setInterval(() => {
    if (process.ppid === expected) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
