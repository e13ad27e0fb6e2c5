// Preloaded by `bench/memory-probe.ts --probe` (node --import): on SIGUSR2 the process writes its V8 heap figures
// (process.memoryUsage, heap statistics, heap spaces) to bench/out/probe-<pid>.json. A diagnostic only.
import fs from 'node:fs';
import path from 'node:path';
import v8 from 'node:v8';

process.on('SIGUSR2', () => {
  const out = {
    mu: process.memoryUsage(),
    heap: v8.getHeapStatistics(),
    spaces: v8
      .getHeapSpaceStatistics()
      .map((s) => ({ n: s.space_name, size: s.space_size, used: s.space_used_size, phys: s.physical_space_size })),
  };
  fs.writeFileSync(path.join(import.meta.dirname, 'out', `probe-${process.pid}.json`), JSON.stringify(out));
});
