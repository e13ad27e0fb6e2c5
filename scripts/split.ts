// npm run start:split — split mode: each subgraph, the router and the front door in its own process.
// Starts the embedded database once (unless DATABASE_URL is set) and hands its URL to the subgraphs.
// `--free-ports` picks free loopback ports instead of the routing URLs of supergraph.yaml (tests). A process that
// exits is restarted with backoff, and the restart logged; <dataDir>/split.json always names the live pids.
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { loadConfig, ConfigError } from '../platform/config.ts';
import { createLogger } from '../platform/logger.ts';
import { startDatabase, takeSignalsFromEmbeddedPostgres } from '../platform/database.ts';
import { ensureInternalSecret } from '../platform/secrets.ts';
import { readSupergraphConfig, ROOT } from '../router/compose.ts';
import { freePort } from '../platform/net.ts';
import { backoffMs } from '../platform/backoff.ts';
import { tunedExec } from '../platform/node-tuning.ts';
import { PARENT_PID_ENV, watchParent } from '../platform/parent-watch.ts';

async function waitFor(url: string, child: ChildProcess, timeoutMs = 60_000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (Date.now() < until) {
    if (child.exitCode !== null) throw new Error(`${url}: process exited with ${child.exitCode}`);
    try {
      const res = await fetch(url);
      if (res.status < 500) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`${url} did not come up within ${timeoutMs} ms`);
}

async function main(): Promise<void> {
  let config;
  try {
    config = loadConfig();
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const log = createLogger(config.logLevel, 'tessera-split');
  const secret = ensureInternalSecret(config);
  const db = await startDatabase({
    databaseUrl: config.databaseUrl,
    dataDir: config.dataDirAbs,
    port: config.embeddedPgPort,
    logger: log,
  });
  const freePorts = process.argv.includes('--free-ports');
  const entries = readSupergraphConfig();
  const urls: string[] = [];
  for (const e of entries)
    urls.push(`${e.name}=${freePorts ? `http://127.0.0.1:${await freePort()}/graphql` : e.routingUrl}`);
  const routerPort = freePorts ? await freePort() : config.routerPort;
  const env = {
    ...process.env,
    DATABASE_URL: db.url,
    TESSERA_INTERNAL_SECRET: secret,
    TESSERA_MODE: 'split',
    TESSERA_SUBGRAPH_URLS: urls.join(','),
    TESSERA_ROUTER_PORT: String(routerPort),
    TESSERA_ROUTER_URL: `http://127.0.0.1:${routerPort}`,
    // Each subgraph listens at its own routing URL's port here (one port for all would collide on one host).
    TESSERA_SUBGRAPH_PORT: '',
    // Every process ends with this launcher, even if it is killed outright (platform/parent-watch.ts).
    [PARENT_PID_ENV]: String(process.pid),
  };
  // The process of each role (a restarted one replaces its predecessor here).
  const procs = new Map<string, ChildProcess>();
  const restarts = new Map<string, number>();
  const start = (role: string) => {
    // Started with the platform's V8/glibc settings already, so main.ts need not load twice to re-execute itself.
    const argv = [process.execPath, path.join(ROOT, 'main.ts'), '--role', role];
    const run = tunedExec(argv, [], env) ?? { args: argv, env };
    const child = spawn(process.execPath, run.args.slice(1), { env: run.env, stdio: ['ignore', 'inherit', 'inherit'] });
    procs.set(role, child);
    return child;
  };
  let stopping = false;
  const stopAll = async (code: number) => {
    if (stopping) return;
    stopping = true;
    const children = [...procs.values()];
    for (const c of children) c.kill('SIGTERM');
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null ? Promise.resolve() : new Promise((r) => c.once('exit', r)),
      ),
    );
    await db.stop();
    process.exit(code);
  };
  takeSignalsFromEmbeddedPostgres();
  process.once('SIGINT', () => void stopAll(0));
  process.once('SIGTERM', () => void stopAll(0));
  process.once('SIGHUP', () => void stopAll(0));
  // Started by a supervisor (a test harness): stop everything when it is gone.
  watchParent(() => void stopAll(0));
  try {
    // Subgraphs side by side: what they create at start-up is serialised in the database itself (migrations, the
    // event tables and the scheduler's table each under an advisory lock), as for replicas starting at once.
    await Promise.all(
      entries.map((e, i) =>
        waitFor(urls[i]!.split('=')[1]!.replace(/\/graphql$/, '/readyz'), start(`subgraph:${e.name}`)),
      ),
    );
    const router = start('router');
    await waitFor(`http://127.0.0.1:${routerPort}/readyz`, router);
    const front = start('front-door');
    await waitFor(`http://${config.host}:${config.port}/health`, front);
    // What runs where, for operators and tests: <dataDir>/split.json.
    const layoutFile = path.join(config.dataDirAbs, 'split.json');
    const writeLayout = () => {
      const layout = {
        url: `http://${config.host}:${config.port}`,
        router: {
          url: `http://127.0.0.1:${routerPort}`,
          pid: procs.get('router')?.pid,
          restarts: restarts.get('router') ?? 0,
        },
        subgraphs: Object.fromEntries(
          entries.map((e, i) => [
            e.name,
            {
              url: urls[i]!.split('=')[1],
              pid: procs.get(`subgraph:${e.name}`)?.pid,
              restarts: restarts.get(`subgraph:${e.name}`) ?? 0,
            },
          ]),
        ),
        frontDoor: { pid: procs.get('front-door')?.pid, restarts: restarts.get('front-door') ?? 0 },
      };
      // Written whole under a temporary name, then renamed, so a reader never sees half a file.
      fs.writeFileSync(`${layoutFile}.tmp`, JSON.stringify(layout, null, 2));
      fs.renameSync(`${layoutFile}.tmp`, layoutFile);
      return layout;
    };
    log.info({ url: writeLayout().url }, 'split mode ready');
    // Supervision: a process that exits is started again, with backoff (250 ms doubling to 10 s, equal jitter: between
    // half and all of it; back to 250 ms once a process has stayed up 30 s), and the restart is logged. In production Kubernetes or systemd do this.
    const supervise = (role: string, child: ChildProcess, startedAt: number, streak: number) => {
      child.once('exit', (code, signal) => {
        if (stopping) return;
        const next = Date.now() - startedAt > 30_000 ? 0 : streak + 1;
        const delay = backoffMs(next, { baseMs: 250, maxMs: 10_000, jitter: 'equal' });
        log.warn(
          { role, pid: child.pid, code, signal, restartInMs: delay },
          'a process of the split deployment exited; restarting it',
        );
        setTimeout(() => {
          if (stopping) return;
          const again = start(role);
          restarts.set(role, (restarts.get(role) ?? 0) + 1);
          writeLayout();
          log.warn({ role, pid: again.pid, restarts: restarts.get(role) }, 'split process restarted');
          supervise(role, again, Date.now(), next);
        }, delay);
      });
    };
    for (const [role, child] of procs) supervise(role, child, Date.now(), 0);
  } catch (err) {
    log.error({ err }, 'split start-up failed');
    await stopAll(1);
  }
}

main().catch((err: unknown) => {
  console.error(err instanceof ConfigError ? err.message : err);
  process.exit(1);
});
