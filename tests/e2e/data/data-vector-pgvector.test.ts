// vectorSearch end to end on a real server with pgvector (CI's PostgreSQL 15, where .ci/run builds it and creates it
// in template1): the data API answers "method": "hnsw" once the column has an HNSW index. The embedded server ships no
// pgvector; the same SQL is tested on PGlite with pglite-pgvector in tests/integration/data/data-vector.test.ts.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import pgClient from 'pg';
import { serverUrl } from '../../support/database.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { vectorSet } from '../../support/vector-set.ts';
import { createProject, dataCall, dropLeftoverRoles, signIn } from './data-support.ts';

const DIM = 16;
const { vectors, queries } = vectorSet(300, DIM);

/** Whether the test server ships pgvector (`pg_available_extensions`). */
async function serverHasPgvector(): Promise<boolean> {
  const c = new pgClient.Client({ connectionString: await serverUrl() });
  await c.connect();
  try {
    return ((await c.query(`select 1 from pg_available_extensions where name = 'vector'`)).rowCount ?? 0) > 0;
  } finally {
    await c.end();
  }
}

describe('vectorSearch on a real server with pgvector', () => {
  let platform: TestPlatform | undefined;
  let available = false;

  beforeAll(async () => {
    available = await serverHasPgvector();
    // CI's external run (PostgreSQL 15) must have it: .ci/run builds pgvector and creates it in template1.
    if (!available && process.env.TESSERA_TEST_TARGET === 'external')
      throw new Error('the external test server has no pgvector: .ci/run should have installed it');
    if (available) platform = await startOneProcess();
  }, 90_000);

  afterAll(async () => {
    const url = platform?.tessera?.config.databaseUrl;
    await platform?.close();
    if (url) await dropLeftoverRoles(url);
  }, 60_000);

  it('answers "method": "hnsw" once the column has an HNSW index, with the exact scan\'s neighbours', async () => {
    if (!available) return; // the embedded server ships no pgvector: covered by the PGlite tests above
    const call = client(platform!.url);
    const project = await createProject(call, await signIn(call), 'vectors');
    const data = dataCall(call, project.apiKey);
    expect(
      (await data('rawSQL', { sql: `create table docs (id int primary key, embedding vector(${DIM}) not null)` }))
        .status,
    ).toBe(200);
    const inserted = await data('insert', {
      table: 'docs',
      values: vectors.slice(0, 100).map((v, id) => ({ id, embedding: v })),
    });
    expect(inserted.status).toBe(201);
    // The same search before and after the index exists.
    const search = () =>
      data('vectorSearch', { table: 'docs', column: 'embedding', vector: queries[0], k: 5, select: ['id'] });
    const exact = await search();
    expect(exact.status).toBe(200);
    expect(exact.body.method).toBe('exact');
    expect(
      (await data('rawSQL', { sql: 'create index on docs using hnsw (embedding vector_cosine_ops)' })).status,
    ).toBe(200);
    const viaIndex = await search();
    expect(viaIndex.status).toBe(200);
    expect(viaIndex.body.method).toBe('hnsw');
    expect(viaIndex.body.rows.length).toBe(5);
    // 100 rows: HNSW finds (nearly) the exact neighbours.
    const ids = (r: { id: number }[]) => r.map((x) => x.id);
    expect(ids(viaIndex.body.rows).filter((id) => ids(exact.body.rows).includes(id)).length).toBeGreaterThanOrEqual(4);
  }, 60_000);
});
