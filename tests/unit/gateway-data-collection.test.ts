// router/gateway-data-collection.ts: a router process sets @apollo/gateway's data collection switch and never loads
// the packages only that data collection uses; were one of them needed after all, it loads on its first use. Run in
// a child Node process, because Jest's own module registry bypasses Node's `require`.
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { describe, expect, it } from '@jest/globals';

const ROOT = path.resolve(import.meta.dirname, '../..');

function inNode(script: string): Record<string, unknown> {
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
    cwd: ROOT,
    env: { ...process.env, NODE_OPTIONS: '', APOLLO_TELEMETRY_DISABLED: '' },
    encoding: 'utf8',
  });
  if (r.status !== 0) throw new Error(`node exited with ${r.status}: ${r.stderr}`);
  return JSON.parse(r.stdout.trim().split('\n').pop()!) as Record<string, unknown>;
}

describe("the gateway's data collection", () => {
  it('is switched off and its packages stay unloaded once the router module is loaded', () => {
    const out = inNode(`
      import Module from 'node:module';
      import path from 'node:path';
      await import('./router/router.ts');
      // Read after the router: loaded only here, the switch and stand-ins would come too late for the gateway.
      const { DATA_COLLECTION_PACKAGES } = await import('./router/gateway-data-collection.ts');
      const loaded = Object.keys(Module._cache);
      // Each package's entry file as the gateway's file would resolve it.
      const resolve = Module.createRequire(path.resolve('node_modules/@apollo/gateway/dist/utilities/opentelemetry.js')).resolve;
      console.log(JSON.stringify({
        switch: process.env.APOLLO_TELEMETRY_DISABLED,
        gateway: loaded.some((f) => f.includes('/@apollo/gateway/dist/utilities/opentelemetry.js')),
        loaded: DATA_COLLECTION_PACKAGES.filter((p) => loaded.includes(resolve(p))),
      }));`);
    expect(out).toEqual({ switch: 'true', gateway: true, loaded: [] });
  });

  it('hands the gateway stand-ins that load the real package on first use, and only to that file', () => {
    const out = inNode(`
      import Module from 'node:module';
      import path from 'node:path';
      import { types } from 'node:util';
      await import('./router/gateway-data-collection.ts');
      const requirerOf = (file) => {
        const m = new Module(file);
        m.filename = file;
        m.paths = Module._nodeModulePaths(path.dirname(file));
        return m;
      };
      const gatewayFile = path.resolve('node_modules/@apollo/gateway/dist/utilities/opentelemetry.js');
      const isLoaded = () => Object.keys(Module._cache).some((f) => f.includes('/@opentelemetry/resources/'));
      const standIn = requirerOf(gatewayFile).require('@opentelemetry/resources');
      const before = isLoaded();
      const Resource = standIn.Resource;
      const real = Module.createRequire(gatewayFile)('@opentelemetry/resources');
      const elsewhere = requirerOf(path.resolve('router/router.ts')).require('@opentelemetry/resources');
      console.log(JSON.stringify({
        before,
        after: isLoaded(),
        same: Resource === real.Resource && typeof Resource === 'function',
        keys: Object.keys(standIn).includes('Resource'),
        elsewhereReal: !types.isProxy(elsewhere),
      }));`);
    expect(out).toEqual({ before: false, after: true, same: true, keys: true, elsewhereReal: true });
  });
});
