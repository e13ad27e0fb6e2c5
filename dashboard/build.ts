// Builds the dashboard (a Vite single-page app under dashboard/src) into dashboard/dist, which the front door serves
// at /dashboard. `npm start` runs it first (prestart) and it builds only when the built files are missing or stale:
// a stamp in dist records a hash of everything the bundle is made from (the app's sources, the client package's
// sources, the lockfile). Built files are never committed.
//
//   node dashboard/build.ts            build when stale
//   node dashboard/build.ts --force    build anyway
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import zlib from 'node:zlib';

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, '..');
/** Where the built app lives (served by rest-compat/dashboard.ts). */
export const DASHBOARD_DIST = path.join(HERE, 'dist');
const STAMP = '.build-stamp';

/** The files the bundle is made from, sorted. */
function inputs(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) {
        if (e.name !== 'cli' && e.name !== 'node_modules') walk(p);
      } else if (!e.name.endsWith('.test.ts')) out.push(p);
    }
  };
  walk(path.join(HERE, 'src'));
  walk(path.join(ROOT, 'packages/client/src'));
  out.push(path.join(HERE, 'index.html'), path.join(HERE, 'build.ts'), path.join(ROOT, 'package-lock.json'));
  return out.sort();
}

/** A hash of the sources: the stamp a build writes, compared to decide whether one is due. */
export function sourceHash(): string {
  const h = crypto.createHash('sha256');
  for (const f of inputs()) {
    h.update(path.relative(ROOT, f)).update('\0').update(fs.readFileSync(f)).update('\0');
  }
  return h.digest('hex');
}

/** Whether dist holds a build of the current sources. */
export function isFresh(hash = sourceHash()): boolean {
  try {
    return (
      fs.readFileSync(path.join(DASHBOARD_DIST, STAMP), 'utf8').trim() === hash &&
      fs.existsSync(path.join(DASHBOARD_DIST, 'index.html'))
    );
  } catch {
    return false;
  }
}

/** Vite's configuration of the app (also for `vite` in development: see dashboard/vite.config.ts). */
export function viteConfig(outDir = DASHBOARD_DIST) {
  return {
    root: HERE,
    base: '/dashboard/',
    configFile: false as const,
    logLevel: 'warn' as const,
    publicDir: false as const,
    // React's automatic JSX runtime through esbuild: no plugin needed (and none that npm 10 fails to install).
    esbuild: { jsx: 'automatic' as const, jsxImportSource: 'react', jsxDev: false },
    mode: 'production',
    resolve: { alias: { '@tessera/client': path.join(ROOT, 'packages/client/src/index.ts') } },
    define: { 'process.env.NODE_ENV': JSON.stringify('production') },
    build: {
      outDir,
      emptyOutDir: true,
      target: 'es2022',
      sourcemap: false,
      reportCompressedSize: false,
      chunkSizeWarningLimit: 400,
      rollupOptions: {
        // React libraries mark modules "use client" for server-component bundlers; meaningless in a plain SPA.
        onwarn(warning: { code?: string; message: string }, warn: (w: { code?: string; message: string }) => void) {
          if (warning.code !== 'MODULE_LEVEL_DIRECTIVE') warn(warning);
        },
      },
    },
  };
}

/** Writes .gz and .br beside each script, style and SVG, served to browsers that accept them (@fastify/static preCompressed). */
function compressAssets(dir: string): void {
  for (const name of fs.readdirSync(dir)) {
    if (!/\.(js|css|svg|json)$/.test(name)) continue;
    const file = path.join(dir, name);
    const data = fs.readFileSync(file);
    fs.writeFileSync(`${file}.gz`, zlib.gzipSync(data, { level: 9 }));
    fs.writeFileSync(
      `${file}.br`,
      zlib.brotliCompressSync(data, {
        params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 11, [zlib.constants.BROTLI_PARAM_SIZE_HINT]: data.length },
      }),
    );
  }
}

const LOCK = path.join(HERE, '.build-lock');
/** A lock older than this is left over from a build that died. */
const STALE_LOCK_MS = 5 * 60_000;

/** Takes the build lock (a folder made atomically), waiting for another process's build to end. */
async function lock(): Promise<() => void> {
  for (;;) {
    try {
      fs.mkdirSync(LOCK);
      return () => fs.rmSync(LOCK, { recursive: true, force: true });
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      try {
        if (Date.now() - fs.statSync(LOCK).mtimeMs > STALE_LOCK_MS) fs.rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}

/**
 * Builds when stale (or always with `force`). Several processes may call it at once (test files, a start): one
 * builds while the others wait for it and then find the build fresh. Answers whether this call built.
 */
export async function ensureDashboardBuilt(
  opts: { force?: boolean; log?: (line: string) => void } = {},
): Promise<boolean> {
  if (!opts.force && isFresh()) return false;
  const release = await lock();
  try {
    const hash = sourceHash();
    if (!opts.force && isFresh(hash)) return false;
    const { build } = await import('vite');
    const started = Date.now();
    // Built beside dist and swapped in, so a front door serving dist never sees half a build.
    const tmp = path.join(HERE, `.dist-${process.pid}-${Date.now()}`);
    const old = `${tmp}-old`;
    try {
      await build(viteConfig(tmp));
      compressAssets(path.join(tmp, 'assets'));
      fs.writeFileSync(path.join(tmp, STAMP), `${hash}\n`);
      try {
        fs.renameSync(DASHBOARD_DIST, old);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      fs.renameSync(tmp, DASHBOARD_DIST);
    } finally {
      fs.rmSync(tmp, { recursive: true, force: true });
      fs.rmSync(old, { recursive: true, force: true });
    }
    opts.log?.(`dashboard built in ${Date.now() - started} ms (dashboard/dist)`);
    return true;
  } finally {
    release();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const built = await ensureDashboardBuilt({ force: process.argv.includes('--force'), log: (l) => console.log(l) });
  if (!built) console.log('dashboard is up to date (dashboard/dist)');
}
