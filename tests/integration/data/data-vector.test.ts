// The pgvector path of vectorSearch, on PGlite with pglite-pgvector (the embedded server has no pgvector):
// the data API's own catalog and SQL builder, an HNSW index detected as such, and HNSW results
// compared with exact ones on a small set (recall). On a real server with pgvector, end to end:
// tests/e2e/data/data-vector-pgvector.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import type pg from 'pg';
import { PGlite } from '@electric-sql/pglite';
import { vector } from '@electric-sql/pglite-pgvector';
import { createCatalog } from '../../../subgraphs/data/services/catalog.ts';
import { buildVectorSearch, HNSW_INDEX_SQL, PGVECTOR_OPCLASSES } from '../../../subgraphs/data/services/builder.ts';
import { vectorSet } from '../../support/vector-set.ts';

const SCHEMA = 'p_0123456789abcdef0123456789abcdef';
const DIM = 16;
const N = 300;
const K = 10;

let db: PGlite;
const catalog = createCatalog();

const { vectors, queries } = vectorSet(N, DIM);

beforeAll(async () => {
  db = await PGlite.create({ extensions: { vector } });
  await db.exec(`create extension vector; create schema ${SCHEMA}; set search_path = ${SCHEMA}, public;
    create table ${SCHEMA}.docs (id int primary key, embedding vector(${DIM}) not null, plain real[] not null)`);
  for (const [i, v] of vectors.entries())
    await db.query(`insert into ${SCHEMA}.docs values ($1, $2, $3)`, [i, JSON.stringify(v), v]);
}, 60_000);

afterAll(async () => {
  await db?.close();
});

const asPool = () => db as unknown as pg.Pool;

async function search(column: string, v: number[], metric: string): Promise<{ ids: number[]; distances: number[] }> {
  const t = await catalog.table(asPool(), SCHEMA, 'docs');
  const built = buildVectorSearch(SCHEMA, t, { table: 'docs', column, vector: v, k: K, metric, select: ['id'] });
  const res = await db.query<{ id: number; _distance: number }>(built.sql, built.params);
  return { ids: res.rows.map((r) => r.id), distances: res.rows.map((r) => Number(r._distance)) };
}

async function hnswIndexed(metric: string): Promise<boolean> {
  const res = await db.query(HNSW_INDEX_SQL, [SCHEMA, 'docs', 'embedding', PGVECTOR_OPCLASSES[metric]]);
  return res.rows.length > 0;
}

describe('vectorSearch on pgvector', () => {
  it('reads a vector column from the catalog and finds the exact neighbours without an index', async () => {
    expect(await hnswIndexed('cosine')).toBe(false);
    for (const metric of ['cosine', 'l2', 'inner_product']) {
      for (const q of queries.slice(0, 4)) {
        const viaPgvector = await search('embedding', q, metric);
        const viaArrays = await search('plain', q, metric);
        expect(viaPgvector.ids).toEqual(viaArrays.ids);
        viaPgvector.distances.forEach((d, i) => expect(d).toBeCloseTo(viaArrays.distances[i]!, 3));
      }
    }
  });

  it('uses an HNSW index once one exists, and its results recall the exact ones', async () => {
    const exact = new Map<number, number[]>();
    for (const [i, q] of queries.entries()) exact.set(i, (await search('plain', q, 'cosine')).ids);
    await db.exec(`create index on ${SCHEMA}.docs using hnsw (embedding vector_cosine_ops)`);
    expect(await hnswIndexed('cosine')).toBe(true);
    expect(await hnswIndexed('l2')).toBe(false);
    // 300 rows are few enough for the planner to prefer a scan: make it take the index, as it does on large tables.
    await db.exec('analyze; set enable_seqscan = off');
    const plan = await db.query<{ 'QUERY PLAN': string }>(
      `explain ${buildVectorSearch(SCHEMA, await catalog.table(asPool(), SCHEMA, 'docs'), { table: 'docs', column: 'embedding', vector: queries[0], k: K }).sql.replace(/\$1/g, `'${JSON.stringify(queries[0])}'`)}`,
    );
    expect(plan.rows.map((r) => r['QUERY PLAN']).join('\n')).toMatch(/docs_embedding_idx/);
    let found = 0;
    for (const [i, q] of queries.entries()) {
      const approx = (await search('embedding', q, 'cosine')).ids;
      found += approx.filter((id) => exact.get(i)!.includes(id)).length;
    }
    const recall = found / (queries.length * K);
    expect(recall).toBeGreaterThanOrEqual(0.9);
    await db.exec('reset enable_seqscan');
  }, 60_000);
});
