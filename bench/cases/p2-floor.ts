// P2 (floor): REST insert of one row against a plain node:http + pg handler running the same insert.
import type { BenchCase } from './types.ts';
import { check, dataProject, floorInsert, tesseraInsert } from './p1-p2-data.ts';

export const p2Floor: BenchCase = {
  id: 'P2-floor',
  title: 'REST insert of one row: POST /v1/insert {table, values} (API key)',
  peer: 'node:http + pg floor (same insert ... returning *, platform user)',
  goal: '>= 0.85x floor (issue 19)',
  async setup(ctx) {
    const p = await dataProject(ctx);
    const targets = { tessera: tesseraInsert(ctx, p), peer: floorInsert(ctx, p) };
    await check(targets.tessera, 201, 'P2 Tessera insert');
    await check(targets.peer, 201, 'P2 floor insert');
    return targets;
  },
};
