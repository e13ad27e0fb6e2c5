// P10-server: the vectorSearch of P10 (cosine, k 10, select id and title, 100,000 rows × 384 dimensions with an HNSW
// index; --quick: 10,000) on a real PostgreSQL server with pgvector, through Tessera's HTTP API: `POST
// /v1/vectorSearch` with the project's API key, one search at a time (authentication, the GraphQL execution, the data
// API's catalog, builder and HNSW-index check, the search on a connection as the project's role). Every answer must
// say `method: "hnsw"`. Same data, queries and brute-force recall as P10 (p10-vector.ts: clustered unit vectors,
// fixed seed), pgvector's defaults (m 16, ef_construction 64, hnsw.ef_search 40).
//
// It needs pgvector on the server Tessera runs on: the machine's PostgreSQL 15, where .ci/run builds it from
// ../shared/vendor into template1's `extensions` schema (on every project role's search path), with `DATABASE_URL`
// pointing there. On a server without it (the embedded PostgreSQL, which CI's quick bench uses) the case is reported
// skipped with that reason; P10 still gives its PGlite figure.
//
// Set-up writes the rows as the project's role (the platform user is granted it; batches of `insert ... select from
// unnest`), then builds the index as that role with maintenance_work_mem 1 GB (the graph of 100,000 × 384 does not fit
// the 64 MB default), as a tenant would through rawSQL with the setting allowed. The peer is the same statement answered
// exactly on the same server (index scans off: a full scan and top-k sort), run directly, 10 queries per round, its
// answers checked against the brute force. Figures also include `sql_p50_ms`: the statement alone on a direct
// connection, to tell the API's own cost from the server's.
import pg from 'pg';
import { client } from '../../tests/support/http.ts';
import { planProject } from '../lib/tenant.ts';
import { createCatalog } from '../../subgraphs/data/services/catalog.ts';
import { buildVectorSearch } from '../../subgraphs/data/services/builder.ts';
import {
  DIMS,
  K,
  EXACT_TIMED,
  TABLE,
  bruteForce,
  makeData,
  round2,
  searchArgs,
  serverHasPgvector,
  vectorFigures,
  type Timed,
} from './p10-vector.ts';
import { percentile } from '../lib/stats.ts';
import type { BenchContext, CustomCase, CustomFigures } from './types.ts';

const BATCH = 2_000;

type Project = { apiKey: string; schema: string; role: string; database: string };

/** A tenant on the enterprise plan (row limits far above 100,000) with one project, its data role and database. */
async function makeProject(ctx: BenchContext): Promise<Project> {
  const { id, apiKey } = await planProject(ctx, 'enterprise', 'p10');
  const db = new pg.Client({ connectionString: ctx.databaseUrl });
  await db.connect();
  try {
    const call = client(ctx.tessera);
    const table = await call('POST', '/v1/rawSQL', {
      apiKey,
      body: {
        sql: `create table ${TABLE} (id integer primary key, title text not null, embedding vector(${DIMS}) not null)`,
      },
    });
    if (table.status !== 200)
      throw new Error(`create table (does the project see pgvector?): ${table.status} ${JSON.stringify(table.body)}`);
    const { rows } = await db.query<{ schema_name: string; role_name: string; database_name: string }>(
      'select schema_name, role_name, database_name from data_project_roles where project_id = $1',
      [id],
    );
    if (!rows[0]) throw new Error('no data role for the project');
    return { apiKey, schema: rows[0].schema_name, role: rows[0].role_name, database: rows[0].database_name };
  } finally {
    await db.end();
  }
}

/** A connection to the project's database as the platform user acting as the project's role. */
async function asProject(ctx: BenchContext, p: Project): Promise<pg.Client> {
  const url = new URL(ctx.databaseUrl);
  url.pathname = `/${p.database}`;
  const c = new pg.Client({ connectionString: url.toString() });
  await c.connect();
  await c.query(`set role "${p.role}"; set search_path = "${p.schema}", extensions`);
  return c;
}

const vectorText = (v: Float32Array, from = 0) => `[${Array.from(v.subarray(from, from + DIMS)).join(',')}]`;

export const p10Server: CustomCase = {
  kind: 'custom',
  id: 'P10-server',
  title:
    'POST /v1/vectorSearch (cosine, k 10) over 100,000 x 384 with an HNSW index on the PostgreSQL server (pgvector; --quick: 10,000)',
  peer: 'the same statement as an exact scan on the same server (index scans off); recall against brute force',
  goal: 'recall@10 >= 0.95 and p50 <= 20 ms',
  async setup(ctx) {
    if (!(await serverHasPgvector(ctx))) {
      return {
        skipped:
          "the database server has no pgvector (pg_available_extensions); run with DATABASE_URL on a server that has it (the machine's PostgreSQL 15 after .ci/run builds it)",
      };
    }
    const count = ctx.quick ? 10_000 : 100_000;
    const { rows, queries } = makeData(count);
    const exact = queries.map((q) => bruteForce(rows, count, q));
    const project = await makeProject(ctx);
    const db = await asProject(ctx, project);
    try {
      for (let from = 0; from < count; from += BATCH) {
        const to = Math.min(count, from + BATCH);
        const ids: number[] = [];
        const titles: string[] = [];
        const vectors: string[] = [];
        for (let i = from; i < to; i++) {
          ids.push(i);
          titles.push(`document ${i}`);
          vectors.push(vectorText(rows, i * DIMS));
        }
        await db.query(
          `insert into ${TABLE} (id, title, embedding) select * from unnest($1::int[], $2::text[], $3::vector[])`,
          [ids, titles, vectors],
        );
      }
      const built = process.hrtime.bigint();
      await db.query(
        `set maintenance_work_mem = '1GB'; create index on ${TABLE} using hnsw (embedding vector_cosine_ops); reset maintenance_work_mem; analyze ${TABLE}`,
      );
      const buildSeconds = Number(process.hrtime.bigint() - built) / 1e9;

      const call = client(ctx.tessera);
      const search = async (q: Float32Array): Promise<Timed> => {
        const started = performance.now();
        const r = await call('POST', '/v1/vectorSearch', { apiKey: project.apiKey, body: searchArgs(q) });
        const ms = performance.now() - started;
        if (r.status !== 200) throw new Error(`vectorSearch: ${r.status} ${JSON.stringify(r.body)}`);
        if (r.body.method !== 'hnsw')
          throw new Error(`vectorSearch answered with method ${JSON.stringify(r.body.method)}, not the HNSW index`);
        return { ids: (r.body.rows as { id: number }[]).map((row) => row.id), ms };
      };
      // The statement the data API runs, on the direct connection (the server's share of a search).
      const t = await createCatalog().table(db as unknown as pg.Pool, project.schema, TABLE);
      const direct = async (q: Float32Array): Promise<Timed> => {
        const sql = buildVectorSearch(project.schema, t, searchArgs(q));
        const started = performance.now();
        const r = await db.query<{ id: number }>(sql.sql, sql.params);
        return { ids: r.rows.map((row) => row.id), ms: performance.now() - started };
      };
      const recall = (answers: number[][]) =>
        answers.reduce((n, ids, i) => n + ids.filter((id) => exact[i]!.includes(id)).length, 0) / (answers.length * K);
      for (const q of queries) await search(q); // warm-up: the index's pages in the server's cache, the path compiled

      const run = async (): Promise<CustomFigures> => {
        const api: Timed[] = [];
        for (const q of queries) api.push(await search(q));
        const sqlMs: number[] = [];
        for (const q of queries) sqlMs.push((await direct(q)).ms);
        const exactRuns: Timed[] = [];
        await db.query('set enable_indexscan = off');
        try {
          for (const q of queries.slice(0, EXACT_TIMED)) exactRuns.push(await direct(q));
        } finally {
          await db.query('reset enable_indexscan');
        }
        return vectorFigures(recall, api, exactRuns, {
          sql_p50_ms: round2(percentile(sqlMs, 50)),
          rows: count,
          dims: DIMS,
          index_build_s: round2(buildSeconds),
        });
      };
      return { run, cleanup: async () => await db.end() };
    } catch (err) {
      await db.end();
      throw err;
    }
  },
};
