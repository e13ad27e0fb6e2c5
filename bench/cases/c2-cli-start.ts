// C2-cli: the `tessera` CLI's cold start — a new process per command, as a shell or a script runs it — against
// Node's own start (`node -e ""`): `--version` (start-up alone) and `projects list` (start-up, credentials, one call),
// for the built package (what `npm install @tessera/client` puts on the PATH) and for the sources run by Node's type
// stripping (`npm run tessera` in this repository), whose first .ts file costs Node ~100 ms to set up.
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { client } from '../../tests/support/http.ts';
import type { BenchCase } from './types.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const SOURCE_CLI = path.join(ROOT, 'packages/client/src/cli/main.ts');
const run = promisify(execFile);

async function ms(args: string[], env: NodeJS.ProcessEnv): Promise<number> {
  const t0 = performance.now();
  await run(process.execPath, args, { env });
  return performance.now() - t0;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export const c2CliStart: BenchCase = {
  id: 'C2-cli',
  kind: 'custom',
  title: 'CLI cold start: `tessera --version` and `tessera projects list` (a new process each)',
  peer: 'node -e "" (Node.js start-up alone)',
  goal: 'built `--version` within 100 ms of Node start-up',
  async setup(ctx) {
    const configDir = fs.mkdtempSync(path.join(ctx.outDir, 'cli-'));
    // The package as it ships (its own build configuration), inside the repository so its dependencies resolve.
    // --quick: the same JavaScript without the type check, declarations and source maps (half the build's time;
    // the type check is CI's `tsc --noEmit`, and the CLI never loads the other two).
    const dist = path.join(configDir, 'dist');
    await run(process.execPath, [
      path.join(ROOT, 'node_modules/typescript/bin/tsc'),
      '-p',
      path.join(ROOT, 'packages/client/tsconfig.build.json'),
      '--outDir',
      dist,
      ...(ctx.quick ? ['--noCheck', '--declaration', 'false', '--sourceMap', 'false'] : []),
    ]);
    const CLI = path.join(dist, 'cli/main.js');
    const email = `bench-cli-${Date.now()}@example.com`;
    const password = 'bench password 123';
    const call = client(ctx.tessera);
    await call('POST', '/auth/api/v1/tenants/signup', { body: { email, password } });
    const env = { PATH: process.env.PATH, HOME: configDir, TESSERA_CONFIG_DIR: configDir, TESSERA_URL: ctx.tessera };
    const login = spawnSync(process.execPath, [CLI, 'login', '--email', email, '--password', password], { env });
    if (login.status !== 0) throw new Error(`C2: login failed: ${login.stderr}`);
    await ms([CLI, 'projects', 'create', 'bench'], env);
    const n = ctx.quick ? 3 : 7;
    return {
      async run() {
        const node: number[] = [];
        const version: number[] = [];
        const list: number[] = [];
        const source: number[] = [];
        for (let i = 0; i < n; i++) {
          node.push(await ms(['-e', ''], env));
          version.push(await ms([CLI, '--version'], env));
          list.push(await ms([CLI, 'projects', 'list', '--json'], env));
          source.push(await ms([SOURCE_CLI, '--version'], env));
        }
        const v = median(version);
        const base = median(node);
        return {
          tessera: { version_ms: v, projects_list_ms: median(list), source_version_ms: median(source) },
          peer: { node_ms: base },
          ratio: base / v,
          met: v - base <= 100,
        };
      },
      async cleanup() {
        fs.rmSync(configDir, { recursive: true, force: true });
      },
    };
  },
};
