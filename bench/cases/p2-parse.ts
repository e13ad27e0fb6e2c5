// P2 (Parse): REST insert of one row against Parse Server 9 on the same PostgreSQL server.
import type { BenchCase } from './types.ts';
import { check, dataProject, parseInsert, parsePeer, tesseraInsert } from './p1-p2-data.ts';

export const p2Parse: BenchCase = {
  id: 'P2-parse',
  title: 'REST insert of one row: POST /v1/insert {table, values} (API key)',
  peer: 'Parse Server 9 (Postgres adapter, master key): POST /parse/classes/BenchInsert',
  goal: 'ratio reported (no goal)',
  async setup(ctx) {
    const [p, parse] = await Promise.all([dataProject(ctx), parsePeer(ctx)]);
    const targets = { tessera: tesseraInsert(ctx, p), peer: parseInsert(parse) };
    await check(targets.tessera, 201, 'P2 Tessera insert');
    await check(targets.peer, 201, 'P2 Parse insert');
    return targets;
  },
};
