// Bench N1's hostile load, in a process of its own (bench/cases/n1-noisy-neighbour.ts starts it): the loops that keep
// the hostile projects' requests in pg_sleep, CPU-heavy statements and async invokes. A neighbour's load comes from
// somewhere else than the victim's client: run in the harness's process, its ~400 answers a second shared one event
// loop with autocannon, which then timed its own waits for that loop into the victim's latency.
// Config: N1_HOSTILE (JSON {url, keys, sleepers, burners, asyncInvokers, invokeKey, startAt, retryMs, countLimits}). Prints `ready` once
// loaded, and starts its loops at `startAt` (epoch ms; at once when absent or past): the harness starts this process
// seconds before the hostile load begins, so the load's first second is the neighbour's requests and not this
// process's own start-up (about half a second of CPU, loading and compiling, on the machine the victim's server
// shares: a neighbour's client starts on its own machine). On SIGTERM the loops stop and it prints the answers
// counted by status as one JSON line, then exits.
import http from 'node:http';
import { watchParent } from '../../platform/parent-watch.ts';

type Config = {
  url: string;
  keys: string[];
  sleepers: number;
  burners: number;
  asyncInvokers: number;
  invokeKey: string;
  startAt?: number;
  /** Wait (ms) before a refused request is sent again; 100 unless the harness says (BENCH_N1_RETRY_MS, diagnosis). */
  retryMs?: number;
  /** Count the 429s by the limit they name (BENCH_N1_ACTIVITY, diagnosis). */
  countLimits?: boolean;
};

const config = JSON.parse(process.env.N1_HOSTILE ?? '{}') as Config;
const base = new URL(config.url);
// A lean client (keep-alive, the status read and the body thrown away): this process shares the machine's two cores
// with the server, and a neighbour's client would not (fetch took about twice the CPU per request).
const agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
const post = (path: string, apiKey: string, body: unknown): Promise<number> =>
  new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: base.hostname,
        port: base.port,
        path,
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'x-api-key': apiKey },
      },
      (res) => {
        // Diagnosis (countLimits): a 429's body is read for the limit it names (`details.limit`; none: the request rate).
        if (!(config.countLimits && res.statusCode === 429)) res.resume();
        let body = '';
        if (config.countLimits && res.statusCode === 429) res.on('data', (d: Buffer) => (body += d.toString()));
        res.on('end', () => {
          if (config.countLimits && res.statusCode === 429) {
            const limit = /"limit":"(\w+)"/.exec(body)?.[1] ?? 'request rate';
            const second = (refusedBy[Math.floor((performance.now() - started) / 1000)] ??= {});
            second[limit] = (second[limit] ?? 0) + 1;
          }
          resolve(res.statusCode ?? 0);
        });
      },
    );
    req.on('error', reject);
    req.end(JSON.stringify(body));
  });
let stop = false;
/** 429s per second since the loops started, by the limit they name (countLimits). */
const refusedBy: Record<string, number>[] = [];
const statuses: Record<number, number> = {};
/** Answers by status per second since the loops started (diagnosis: which second the hostile load changed shape). */
let started = performance.now();
const perSecond: Record<number, number>[] = [];

// A refused request is sent again 100 ms later (a loop re-sending at once measured this machine's client more than
// the server: each loop still sends ten refused requests a second).
const loop = (fn: () => Promise<number>) =>
  (async () => {
    while (!stop) {
      const status = await fn().catch(() => 0);
      statuses[status] = (statuses[status] ?? 0) + 1;
      const second = (perSecond[Math.floor((performance.now() - started) / 1000)] ??= {});
      second[status] = (second[status] ?? 0) + 1;
      if (status === 429) await new Promise((r) => setTimeout(r, config.retryMs ?? 100));
    }
  })();

const sql = (key: string, text: string) => () => post('/v1/rawSQL', key, { sql: text });

const loops: Promise<void>[] = [];
const begin = () => {
  if (stop) return;
  started = performance.now();
  for (const key of config.keys) {
    for (let i = 0; i < config.sleepers; i++) loops.push(loop(sql(key, 'select pg_sleep(1)')));
    for (let i = 0; i < config.burners; i++)
      loops.push(loop(sql(key, 'select count(*) from generate_series(1, 3000000) g where g % 7 = 3')));
  }
  for (let i = 0; i < config.asyncInvokers; i++)
    loops.push(loop(() => post('/edge/api/v1/invoke/n1-tick?async=true', config.invokeKey, {})));
};
setTimeout(begin, Math.max(0, (config.startAt ?? 0) - Date.now()));

// It ends itself when the harness is gone (its loops would otherwise hit a closed port in a tight loop).
watchParent(() => process.exit(1));
// Alive until told to stop, also with every loop switched off (BENCH_N1_OFF).
const alive = setInterval(() => {}, 1_000);
process.on('SIGTERM', () => {
  stop = true;
  clearInterval(alive);
  void Promise.all(loops).then(() => {
    if (config.countLimits)
      process.stdout.write(`N1 hostile refusals per second by limit: ${JSON.stringify(refusedBy)}\n`);
    process.stdout.write(`N1 hostile answers per second: ${JSON.stringify(perSecond)}\n`);
    process.stdout.write(`${JSON.stringify(statuses)}\n`);
    process.exit(0);
  });
});
process.stdout.write('ready\n');
