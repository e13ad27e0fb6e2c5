// Folders with their own package.json and lockfile, kept out of Tessera's dependencies (bench/peers: the
// benchmark's peers; deploy/hive-gateway: Hive Gateway in front of Tessera's subgraphs): installed with `npm ci`
// on first use, and again whenever their lockfile changes.
import fs from 'node:fs';
import path from 'node:path';
import crypto from 'node:crypto';
import { spawnSync } from 'node:child_process';

/** Runs `npm ci` in `dir` unless its node_modules was installed from this very lockfile. */
export function ensureInstalled(dir: string, opts: { quiet?: boolean } = {}): void {
  const lockHash = crypto
    .createHash('sha256')
    .update(fs.readFileSync(path.join(dir, 'package-lock.json')))
    .digest('hex');
  const stamp = path.join(dir, 'node_modules', '.tessera-lock-sha256');
  if (fs.existsSync(stamp) && fs.readFileSync(stamp, 'utf8') === lockHash) return;
  if (!opts.quiet) console.log(`installing ${path.relative(process.cwd(), dir) || dir} (npm ci) ...`);
  const r = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: dir,
    stdio: opts.quiet ? 'pipe' : 'inherit',
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`npm ci in ${dir} failed${opts.quiet ? `:\n${r.stdout}\n${r.stderr}` : ''}`);
  fs.writeFileSync(stamp, lockHash);
}
