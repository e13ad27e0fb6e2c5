// P1 (floor): REST find on an indexed column against a plain node:http + pg handler running the same select.
import type { BenchCase } from './types.ts';
import { check, dataProject, floorFind, tesseraFind } from './p1-p2-data.ts';

export const p1Floor: BenchCase = {
  id: 'P1-floor',
  title: 'REST find on an indexed column: POST /v1/find {where: {category}, limit: 10} (API key)',
  peer: 'node:http + pg floor (same select, platform user)',
  goal: '>= 0.85x floor (issue 19)',
  async setup(ctx) {
    const p = await dataProject(ctx);
    const targets = { tessera: tesseraFind(ctx, p), peer: floorFind(ctx, p) };
    await check(targets.tessera, 200, 'P1 Tessera find', 10);
    await check(targets.peer, 200, 'P1 floor find', 10);
    return targets;
  },
};
