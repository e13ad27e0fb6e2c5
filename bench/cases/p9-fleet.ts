// P9-fleet (issue 29): P9's many-project find with the projects spread over two PostgreSQL servers vs all on one.
// The harness's Tessera gets a second project server: the machine's PostgreSQL 15 started by the case the way the
// tests start theirs (tests/support/pg-servers.ts, max_connections 400), registered as the data subgraph's registry
// does (tests/support/fleet.ts: a `data_servers` row with the URL sealed under the harness's internal secret, and the
// broadcast), read-only so no other case's project lands there. In the first round, one tenant on the enterprise plan
// makes two sets of N projects (full 400, --quick 16) as P9 makes them (a 100-row indexed table each, 16 at a time):
// set "one" all on the default server (the harness's embedded PostgreSQL 18), set "two" half on the default server and
// half on the second (placement steered by the servers' states, restored after). Each round drives P9's find round
// robin over each set's keys, one set after the other (which goes first alternates by round), on the same process:
// the peer is "one server", Tessera is "two servers". Each server has its own connection budget
// (TESSERA_DATA_MAX_CONNECTIONS, 200 here) and fair shares, so N/2 projects per server contend for less than N on
// one. Both servers share the machine's 2 cores, so this measures routing and per-server budgets, not added hardware.
// Reported, not judged on speed: met = no failed request.
import { pg15Available, startPgServer, type TestPgServer } from '../../tests/support/pg-servers.ts';
import { addProjectServer, placeOn } from '../../tests/support/fleet.ts';
import { withPgClient } from '../../platform/pg-pool.ts';
import { planTenant } from '../lib/tenant.ts';
import { tesseraSecret } from './p3-graphql.ts';
import { checkAll, load, makeProject, parallel, type Side } from './p9-projects.ts';
import type { CustomCase, CustomFigures } from './types.ts';

const SECOND = 'p9-second';
const SETUP_CONCURRENCY = 16;

/** The data API's connections open on the server at `url` (application_name tessera-data). */
async function dataConnections(url: string): Promise<number> {
  return await withPgClient(url, async (c) =>
    Number(
      (
        await c.query<{ n: string }>(
          `select count(*) as n from pg_stat_activity where application_name = 'tessera-data'`,
        )
      ).rows[0]!.n,
    ),
  );
}

export const p9Fleet: CustomCase = {
  kind: 'custom',
  id: 'P9-fleet',
  title:
    'P9 over a fleet: POST /v1/find round robin over N projects spread over two servers vs N on one (N 400, --quick 16)',
  peer: 'the same find round robin over N projects all on the default server (same process, same round)',
  goal: 'reported (issue 29: two servers vs one); no failed request',
  async setup(ctx) {
    if (!pg15Available())
      return { skipped: 'no PostgreSQL 15 binaries for the second server (tests/support/pg-servers.ts)' };
    // --quick: 16 projects a set (one batch of the set-up's 16) and 1 s loads, enough for every step to give figures.
    const count = ctx.quick ? 16 : 400;
    const seconds = ctx.quick ? 1 : 10;
    const side: Side = { url: ctx.tessera, pid: ctx.tesseraPid };
    const target = { databaseUrl: ctx.databaseUrl, secret: tesseraSecret(ctx.tesseraPid).secret };
    const server: TestPgServer = await startPgServer({ max_connections: 400 });
    // Read-only until the projects of this case are placed: the other cases' set-ups make projects meanwhile.
    await addProjectServer(target, SECOND, server.url, { state: 'read-only' });

    let made: { one: string[]; two: string[]; setupSeconds: number } | undefined;
    let rounds = 0;
    const prepare = async () => {
      const started = process.hrtime.bigint();
      const { token } = await planTenant(ctx, 'enterprise', 'p9-fleet');
      const batch = async (serverId: string, n: number, from: number): Promise<string[]> => {
        await placeOn(target, serverId);
        const keys = await parallel(
          Array.from({ length: n }, (_, i) => from + i),
          SETUP_CONCURRENCY,
          async (i) => (await makeProject(ctx.tessera, token, i)).apiKey,
        );
        return keys;
      };
      try {
        const one = await batch('default', count, 0);
        const half = Math.floor(count / 2);
        const twoSecond = await batch(SECOND, half, count);
        const twoDefault = await batch('default', count - half, count + half);
        // Interleaved: consecutive requests of the load alternate between the servers.
        const two = twoDefault.flatMap((k, i) => (twoSecond[i] ? [k, twoSecond[i]] : [k]));
        // Placed as steered: the second server holds exactly its half (its row says so, and the database is there).
        const onSecond = await withPgClient(ctx.databaseUrl, async (c) =>
          Number(
            (
              await c.query<{ n: string }>('select count(*) as n from data_project_roles where server_id = $1', [
                SECOND,
              ])
            ).rows[0]!.n,
          ),
        );
        const databases = await withPgClient(server.url, async (c) =>
          Number(
            (await c.query<{ n: string }>(`select count(*) as n from pg_database where datname like 'tsp\\_%'`))
              .rows[0]!.n,
          ),
        );
        if (onSecond !== half || databases !== half)
          throw new Error(`P9-fleet: ${onSecond} project rows and ${databases} databases on ${SECOND}, not ${half}`);
        await checkAll(side, [...one, ...two]);
        return { one, two, setupSeconds: Number(process.hrtime.bigint() - started) / 1e9 };
      } finally {
        await placeOn(target, 'default'); // and the second server read-only again
      }
    };

    const run = async (): Promise<CustomFigures> => {
      made ??= await prepare();
      // The order alternates from round to round (the second load finds the process and the servers warmer).
      const oneFirst = rounds++ % 2 === 0;
      const first = await load(ctx, side, oneFirst ? made.one : made.two, seconds);
      const second = await load(ctx, side, oneFirst ? made.two : made.one, seconds);
      const [oneServer, twoServers] = oneFirst ? [first, second] : [second, first];
      const tessera = {
        projects: count,
        p50_ms: twoServers.p50,
        p99_ms: twoServers.p99,
        rps: Math.round(twoServers.rps),
        errors: twoServers.errors,
        tessera_cpu_ms_per_req: twoServers.tesseraCpuMsPerReq,
        data_connections_default: await dataConnections(ctx.databaseUrl),
        data_connections_second: await dataConnections(server.url),
        setup_s: +made.setupSeconds.toFixed(1),
      };
      const peer = {
        p50_ms: oneServer.p50,
        p99_ms: oneServer.p99,
        rps: Math.round(oneServer.rps),
        errors: oneServer.errors,
        tessera_cpu_ms_per_req: oneServer.tesseraCpuMsPerReq,
      };
      return {
        tessera,
        peer,
        ratio: peer.p99_ms / Math.max(tessera.p99_ms, 1e-9),
        met: tessera.errors === 0 && peer.errors === 0,
      };
    };

    const cleanup = async () => {
      await server.stop();
    };
    return { run, cleanup };
  },
};
