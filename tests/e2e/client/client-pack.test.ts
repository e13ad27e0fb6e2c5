// The README's "Using it in your own app", as a user runs it (issue 27, 6): `npm pack` the client package from this
// checkout, install the tarball in an empty folder, import @tessera/client from a plain Node script and call a live
// Tessera, and run the installed `tessera` command. The runtime dependencies come from npm's cache (the project's
// own install filled it), so the test needs no network beyond what `npm ci` already used.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';

const run = promisify(execFile);
const CLIENT = new URL('../../../packages/client/', import.meta.url).pathname;

let platform: TestPlatform;
let dir: string;

beforeAll(async () => {
  platform = await startOneProcess();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-app-'));
}, 90_000);
afterAll(async () => {
  await platform?.close();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
});

describe('@tessera/client in an app of its own', () => {
  it('packs, installs in an empty folder, and talks to Tessera', async () => {
    const packed = await run('npm', ['pack', '--pack-destination', dir, '--json'], { cwd: CLIENT, timeout: 120_000 });
    const tarball = path.join(dir, (JSON.parse(packed.stdout) as { filename: string }[])[0]!.filename);
    expect(fs.existsSync(tarball)).toBe(true);
    const app = path.join(dir, 'app');
    fs.mkdirSync(app);
    fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'my-app', private: true, type: 'module' }));
    await run('npm', ['install', tarball, '--prefer-offline', '--no-audit', '--no-fund'], {
      cwd: app,
      timeout: 120_000,
    });
    fs.writeFileSync(
      path.join(app, 'main.js'),
      `import { createClient, isTesseraError } from '@tessera/client';
const t = createClient({ url: process.env.TESSERA_URL });
const plans = await t.tenant.plans();
let refused = '';
try { await t.data.find({ table: 'x' }); } catch (err) { refused = isTesseraError(err) ? err.code : String(err); }
console.log(JSON.stringify({ plans: plans.map((p) => p.id), refused }));
`,
    );
    const out = await run(process.execPath, ['main.js'], {
      cwd: app,
      env: { ...process.env, TESSERA_URL: platform.url },
    });
    expect(JSON.parse(out.stdout)).toEqual({ plans: expect.arrayContaining(['free']), refused: 'UNAUTHENTICATED' });
    const cli = await run(path.join(app, 'node_modules/.bin/tessera'), ['--version'], { cwd: app });
    expect(cli.stdout.trim()).toBe('0.1.0');
  }, 240_000);
});
