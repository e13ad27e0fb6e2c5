// Prometheus metrics of a Tessera process (prom-client), served at GET /metrics by every process: HTTP requests
// per route and status with latency histograms, GraphQL operations, connection pools (size, idle, waiting), the
// scheduler's queue depth and lag, function runs by outcome and uploaded bytes, beside Node's default metrics.
// Labels come from bounded sets only (route templates, never raw paths or operation names a caller chose).
import client from 'prom-client';
import type pg from 'pg';

/** The process's registry; every series carries `role` (all, front-door, router, subgraph:<name>). */
export const registry = new client.Registry();
registry.setDefaultLabels({ role: 'all' });
client.collectDefaultMetrics({ register: registry });

/** Names the role of this process in every series (split mode: set once at start). */
export function setMetricsRole(role: string): void {
  registry.setDefaultLabels({ role });
}

export const httpRequests = new client.Counter({
  name: 'tessera_http_requests_total',
  help: 'HTTP requests answered, by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  registers: [registry],
});

export const httpDuration = new client.Histogram({
  name: 'tessera_http_request_duration_seconds',
  help: 'Time to answer an HTTP request (until the response is finished), by method, route template and status.',
  labelNames: ['method', 'route', 'status'] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [registry],
});

export const graphqlOperations = new client.Counter({
  name: 'tessera_graphql_operations_total',
  help: 'GraphQL operations a subgraph executed, by subgraph, operation type and outcome (ok, error).',
  labelNames: ['subgraph', 'type', 'outcome'] as const,
  registers: [registry],
});

export const functionRuns = new client.Counter({
  name: 'tessera_function_runs_total',
  help: 'Edge function runs (dry runs included), by outcome: succeeded, failed, timeout.',
  labelNames: ['outcome'] as const,
  registers: [registry],
});

export const uploadBytes = new client.Counter({
  name: 'tessera_upload_bytes_total',
  help: 'Bytes of completed uploads stored.',
  registers: [registry],
});

const pools = new Map<string, Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>>();
new client.Gauge({
  name: 'tessera_db_pool_connections',
  help: 'Connections of each PostgreSQL pool of the process, by state (total, idle, waiting: clients queued for a connection).',
  labelNames: ['pool', 'state'] as const,
  registers: [registry],
  collect() {
    this.reset();
    for (const [name, p] of pools) {
      this.set({ pool: name, state: 'total' }, p.totalCount);
      this.set({ pool: name, state: 'idle' }, p.idleCount);
      this.set({ pool: name, state: 'waiting' }, p.waitingCount);
    }
  },
});

/** Reports a pg pool's usage under `name` until `untrackPool`. */
export function trackPool(name: string, pool: Pick<pg.Pool, 'totalCount' | 'idleCount' | 'waitingCount'>): void {
  pools.set(name, pool);
}

/** Stops reporting a pool (closed). */
export function untrackPool(name: string): void {
  pools.delete(name);
}

type RealtimeStats = () => { projects: number; subscribers: number; elsewhere?: number };
const realtimeSources = new Set<RealtimeStats>();
/** A gauge summing one figure of every tracked realtime service at each scrape. */
const realtimeGauge = (name: string, help: string, figure: keyof ReturnType<RealtimeStats>) =>
  new client.Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      let n = 0;
      for (const stats of realtimeSources) n += stats()[figure] ?? 0;
      this.set(n);
    },
  });
realtimeGauge(
  'tessera_realtime_subscribers',
  "Realtime subscriptions (SSE and WebSocket) open on this process, each listening for its project's changes.",
  'subscribers',
);
realtimeGauge(
  'tessera_realtime_subscribers_elsewhere',
  "Realtime subscriptions the other data processes last reported (within 5 s), counted against the plans' max_realtime_subscribers.",
  'elsewhere',
);
realtimeGauge(
  'tessera_realtime_listening_projects',
  'Projects whose change stream this process listens to (one PostgreSQL LISTEN connection each).',
  'projects',
);

/** Reports a realtime service's subscribers and listening projects until the returned function is called. */
export function trackRealtime(stats: RealtimeStats): () => void {
  realtimeSources.add(stats);
  return () => realtimeSources.delete(stats);
}

/** One project server's figures (data subgraph, services/servers.ts): sampled, except `connections`. */
export type ProjectServerFigures = {
  server: string;
  projects: number;
  connections: number;
  databaseBytes: number | null;
  up: boolean;
};
type ProjectServerSource = () => ProjectServerFigures[];
const projectServerSources = new Set<ProjectServerSource>();
/** A gauge by server over every tracked source (a figure null: the server was not reached, no value rather than 0). */
const projectServerGauge = (name: string, help: string, figure: (f: ProjectServerFigures) => number | null) =>
  new client.Gauge({
    name,
    help,
    labelNames: ['server'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const source of projectServerSources)
        for (const f of source()) {
          const v = figure(f);
          if (v !== null) this.set({ server: f.server }, v);
        }
    },
  });
projectServerGauge(
  'tessera_project_server_projects',
  'Projects whose database lives on each project server (sampled every 30 s by each data process).',
  (f) => f.projects,
);
projectServerGauge(
  'tessera_project_server_connections',
  "Connections this process holds open to each project server for projects' requests.",
  (f) => f.connections,
);
projectServerGauge(
  'tessera_project_server_database_bytes',
  'Bytes of the project databases on each project server (pg_database_size, sampled every 30 s).',
  (f) => f.databaseBytes,
);
projectServerGauge(
  'tessera_project_server_up',
  'Whether each project server answered the last sample (1) or not (0).',
  (f) => (f.up ? 1 : 0),
);

/** Reports the project servers' figures (read at each scrape) until the returned function is called. */
export function trackProjectServers(source: ProjectServerSource): () => void {
  projectServerSources.add(source);
  return () => projectServerSources.delete(source);
}

type QueueProbe = () => Promise<{ depth: number; oldestDueAt: Date | null }>;
const queues = new Map<string, QueueProbe>();
// Both gauges come from one probe per scheduler per scrape (prom-client collects metrics concurrently: the two
// collect functions share the probe's promise for a moment).
type QueueFigures = { name: string; depth: number; lag: number }[];
let probing: { at: number; figures: Promise<QueueFigures> } | undefined;
function probeQueues(): Promise<QueueFigures> {
  if (probing && Date.now() - probing.at < 1000) return probing.figures;
  const figures = Promise.all(
    [...queues].map(async ([name, probe]) => {
      try {
        const { depth, oldestDueAt } = await probe();
        return [{ name, depth, lag: oldestDueAt ? Math.max(0, (Date.now() - oldestDueAt.getTime()) / 1000) : 0 }];
      } catch {
        return []; // the scheduler's database is unreachable: no figure rather than a wrong one
      }
    }),
  ).then((all) => all.flat());
  probing = { at: Date.now(), figures };
  return figures;
}
new client.Gauge({
  name: 'tessera_scheduler_queue_depth',
  help: 'Jobs due and waiting for a worker, by scheduler.',
  labelNames: ['scheduler'] as const,
  registers: [registry],
  async collect() {
    const figures = await probeQueues();
    this.reset();
    for (const f of figures) this.set({ scheduler: f.name }, f.depth);
  },
});
new client.Gauge({
  name: 'tessera_scheduler_lag_seconds',
  help: 'How long the oldest due job has waited past its run time, by scheduler (0 when none waits).',
  labelNames: ['scheduler'] as const,
  registers: [registry],
  async collect() {
    const figures = await probeQueues();
    this.reset();
    for (const f of figures) this.set({ scheduler: f.name }, f.lag);
  },
});

/** Reports a scheduler's queue (read at each scrape) until `untrackQueue`. */
export function trackQueue(name: string, probe: QueueProbe): void {
  queues.set(name, probe);
}

/** Stops reporting a scheduler's queue. */
export function untrackQueue(name: string): void {
  queues.delete(name);
}

type Executable = { name: string; execute: (query: string, ...rest: never[]) => Promise<{ errors?: unknown }> };

/** Counts the operations a running subgraph executes (wraps its `execute` in place). */
export function countOperations<T extends Executable>(sub: T): T {
  const execute = sub.execute.bind(sub);
  sub.execute = (async (query: string, ...rest: never[]) => {
    const type = /^\s*(mutation|subscription)\b/.exec(query)?.[1] ?? 'query';
    try {
      const result = await execute(query, ...rest);
      graphqlOperations.inc({ subgraph: sub.name, type, outcome: result.errors ? 'error' : 'ok' });
      return result;
    } catch (err) {
      graphqlOperations.inc({ subgraph: sub.name, type, outcome: 'error' });
      throw err;
    }
  }) as T['execute'];
  return sub;
}
