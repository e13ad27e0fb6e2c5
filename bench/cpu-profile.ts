// node bench/cpu-profile.ts <file.cpuprofile> [top]: sums the self-time of a V8 CPU profile (as written by
// `node --cpu-prof`, e.g. `BENCH_CPU_PROF=<dir> npm run bench`) per function and per file/package, and
// prints the top rows of each with their share of the sampled time. `--callers <functionName>` also prints
// the heaviest call paths (`--depth <n>` frames up, default 5) that end in that function.
import fs from 'node:fs';
import path from 'node:path';

type Node = { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] };
type Profile = { nodes: Node[]; samples: number[]; timeDeltas: number[] };

const file = process.argv[2];
if (!file) {
  console.error('usage: node bench/cpu-profile.ts <file.cpuprofile> [top]');
  process.exit(2);
}
const callersOf = process.argv.includes('--callers') ? process.argv[process.argv.indexOf('--callers') + 1] : undefined;
const depth = process.argv.includes('--depth') ? Number(process.argv[process.argv.indexOf('--depth') + 1]) : 5;
const top = Number(process.argv.slice(3).find((a, i, all) => /^\d+$/.test(a) && all[i - 1] !== '--depth') ?? 30);
const profile = JSON.parse(fs.readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<number, number>();
profile.samples.forEach((id, i) => selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0)));

const root = path.resolve(import.meta.dirname, '..');
/** A short place for a script URL: the package under node_modules, or the path inside the repository. */
function placeOf(url: string): string {
  if (!url) return '(native)';
  const p = url.replace(/^file:\/\//, '');
  const nm = p.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const rest = p.slice(nm + 'node_modules/'.length).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  if (p.startsWith('node:')) return p;
  return path.relative(root, p) || p;
}

const fns = new Map<string, number>();
const places = new Map<string, number>();
let total = 0;
let idle = 0;
for (const [id, us] of selfUs) {
  const n = byId.get(id)!;
  const { functionName, url, lineNumber } = n.callFrame;
  total += us;
  if (functionName === '(idle)') idle += us;
  const place = placeOf(url);
  const fn = `${functionName || '(anonymous)'} ${place}${url ? `:${lineNumber + 1}` : ''}`;
  fns.set(fn, (fns.get(fn) ?? 0) + us);
  if (functionName !== '(idle)') places.set(place, (places.get(place) ?? 0) + us);
}
const busy = total - idle;
const print = (title: string, m: Map<string, number>) => {
  console.log(`\n${title} (share of non-idle time ${(busy / 1e6).toFixed(1)} s; idle ${(idle / 1e6).toFixed(1)} s)`);
  for (const [k, us] of [...m]
    .filter(([k]) => !k.startsWith('(idle)'))
    .sort((a, b) => b[1] - a[1])
    .slice(0, top)) {
    console.log(`${((100 * us) / busy).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(0).padStart(7)} ms  ${k}`);
  }
};
print('Self-time by file/package', places);
print('Self-time by function', fns);

if (callersOf) {
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const paths = new Map<string, number>();
  for (const [id, us] of selfUs) {
    if (byId.get(id)!.callFrame.functionName !== callersOf) continue;
    const frames: string[] = [];
    for (let p = parent.get(id); p !== undefined && frames.length < depth; p = parent.get(p)) {
      const f = byId.get(p)!.callFrame;
      frames.push(`${f.functionName || '(anonymous)'} ${placeOf(f.url)}:${f.lineNumber + 1}`);
    }
    const key = frames.join(' < ');
    paths.set(key, (paths.get(key) ?? 0) + us);
  }
  print(`Call paths ending in ${callersOf}`, paths);
}
