// P1 (Parse): REST find on an indexed column against Parse Server 9 on the same PostgreSQL server.
import type { BenchCase } from './types.ts';
import { check, dataProject, parseFind, parsePeer, tesseraFind } from './p1-p2-data.ts';

export const p1Parse: BenchCase = {
  id: 'P1-parse',
  title: 'REST find on an indexed column: POST /v1/find {where: {category}, limit: 10} (API key)',
  peer: 'Parse Server 9 (Postgres adapter, master key): GET /parse/classes/BenchItem?where=...&limit=10',
  goal: 'ratio reported (no goal)',
  async setup(ctx) {
    const [p, parse] = await Promise.all([dataProject(ctx), parsePeer(ctx)]);
    const targets = { tessera: tesseraFind(ctx, p), peer: parseFind(parse) };
    await check(targets.tessera, 200, 'P1 Tessera find', 10);
    await check(targets.peer, 200, 'P1 Parse find', 10);
    return targets;
  },
};
