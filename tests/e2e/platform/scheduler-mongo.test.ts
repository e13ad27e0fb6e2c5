// The platform with TESSERA_SCHEDULER_URL=mongodb://…: every scheduler (functions, identity, storage) keeps its jobs
// in MongoDB instead of the platform PostgreSQL; an asynchronous function invocation runs through it. The MongoDB
// here is CongoDB, the wire-protocol emulator of @push.rocks/smartmongo (production: a replica set).
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { MongoClient } from 'mongodb';
import pg from 'pg';
import { CongoServer } from '@push.rocks/smartmongo/dist_ts/congodb/index.js';
import { startEdgeWorld, type EdgeWorld } from '../functions/functions-helpers.ts';
import { waitFor } from '../../support/wait-for.ts';

const F = '/edge/api/v1';
let server: CongoServer;
let w: EdgeWorld;
let mongoUrl = '';

beforeAll(async () => {
  server = new CongoServer({ host: '127.0.0.1', port: 0 });
  await server.start();
  const port = (server as unknown as { server: { address: () => { port: number } } }).server.address().port;
  mongoUrl = `mongodb://127.0.0.1:${port}/tessera?serverMonitoringMode=poll&directConnection=true`;
  w = await startEdgeWorld({ TESSERA_SCHEDULER_URL: mongoUrl });
}, 90_000);

afterAll(async () => {
  await w?.p.close();
  await server?.stop();
}, 60_000);

describe('the scheduler on MongoDB, platform-wide', () => {
  it('runs an asynchronous invocation through MongoDB, not the platform PostgreSQL', async () => {
    const as = { apiKey: w.apiKey };
    expect(
      (
        await w.call('POST', `${F}/functions`, {
          ...as,
          body: {
            name: 'echo',
            steps: [{ name: 'out', kind: 'Transform', expression: { got: '{{ input.body.n }}' } }],
          },
        })
      ).status,
    ).toBe(201);
    const res = await w.call('POST', `${F}/invoke/echo?async=true`, { ...as, body: { n: 7 } });
    expect(res.status).toBe(202);
    const done = await waitFor(async () => {
      const e = await w.call('GET', `${F}/executions/${res.body.execution_id}`, as);
      return e.body.execution.status === 'succeeded' ? e.body.execution : undefined;
    });
    expect(done.output).toEqual({ got: 7 });
    const mongo = new MongoClient(mongoUrl);
    try {
      const names = await mongo.db().collection('agendaJobs').distinct('name');
      expect(names).toEqual(
        expect.arrayContaining([expect.stringMatching(/^functions\./), expect.stringMatching(/^storage\./)]),
      );
    } finally {
      await mongo.close();
    }
    const db = new pg.Client({ connectionString: w.p.tessera!.config.databaseUrl });
    await db.connect();
    try {
      const table = await db.query(`select to_regclass('agenda_jobs') as t`);
      if (table.rows[0].t) expect((await db.query('select count(*)::int as n from agenda_jobs')).rows[0].n).toBe(0);
    } finally {
      await db.end();
    }
  }, 60_000);
});
