import { describe, it, expect } from '@jest/globals';
import { loadConfig, ConfigError, CONFIG_SCHEMA } from './config.ts';

describe('config', () => {
  it('loads every default when the environment is empty', () => {
    const c = loadConfig({}, '/srv/app');
    expect(c.port).toBe(8080);
    expect(c.dataDirAbs).toBe('/srv/app/.tessera');
    expect(c.databaseUrl).toBeUndefined();
    expect(c.issuer).toBe('http://localhost:8080');
    expect(c.mode).toBe('single');
  });

  it('parses typed values and strips a trailing slash from URLs', () => {
    const c = loadConfig({
      PORT: '80',
      TESSERA_PUBLIC_URL: 'https://api.example.com/',
      DATABASE_URL: 'postgres://u:p@db:5432/x',
      TESSERA_TRUST_PROXY: 'yes',
    });
    expect(c.port).toBe(80);
    expect(c.issuer).toBe('https://api.example.com');
    expect(c.databaseUrl).toBe('postgres://u:p@db:5432/x');
    expect(c.trustProxy).toBe(true);
  });

  it('refuses to start with a message listing every bad value, not only the first', () => {
    let err: unknown;
    try {
      loadConfig({ PORT: 'eighty', DATABASE_URL: 'mysql://x', LOG_LEVEL: 'loud', TESSERA_INTERNAL_SECRET: 'short' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const problems = (err as ConfigError).problems;
    expect(problems).toHaveLength(4);
    expect(problems.join('\n')).toMatch(/PORT: expected a whole number/);
    expect(problems.join('\n')).toMatch(/DATABASE_URL: expected a postgres: or postgresql: URL/);
    expect(problems.join('\n')).toMatch(/LOG_LEVEL: expected one of/);
    expect(problems.join('\n')).toMatch(/TESSERA_INTERNAL_SECRET: expected at least 32 characters/);
    expect((err as Error).message).toContain('Invalid configuration');
  });

  it("takes each split-mode process's bind address apart from the URL others reach it at", () => {
    const c = loadConfig({
      TESSERA_SUBGRAPH_HOST: '0.0.0.0',
      TESSERA_SUBGRAPH_PORT: '4002',
      TESSERA_ROUTER_HOST: '::',
      TESSERA_SUBGRAPH_URLS: 'data=http://tessera-data:80/graphql',
    });
    expect([c.subgraphHost, c.subgraphPort, c.routerHost]).toEqual(['0.0.0.0', 4002, '::']);
    expect(loadConfig({}).subgraphPort).toBeUndefined();
    expect(() => loadConfig({ TESSERA_SUBGRAPH_PORT: 'x' })).toThrow(/TESSERA_SUBGRAPH_PORT: expected a whole number/);
  });

  it('takes a MongoDB scheduler URL with several hosts, and refuses what is not one', () => {
    const multi = 'mongodb://u:p@m1:27017,m2:27017,m3:27017/tessera?replicaSet=rs0';
    expect(loadConfig({ TESSERA_SCHEDULER_URL: multi }).schedulerUrl).toBe(multi);
    expect(loadConfig({}).schedulerUrl).toBeUndefined();
    expect(() => loadConfig({ TESSERA_SCHEDULER_URL: 'postgres://db/x' })).toThrow(
      /TESSERA_SCHEDULER_URL: expected a mongodb/,
    );
  });

  it('refuses a port out of range', () => {
    expect(() => loadConfig({ PORT: '70000' })).toThrow(/PORT: expected a number from 0 to 65535/);
  });

  it('documents every row with an environment name and a description', () => {
    for (const row of Object.values(CONFIG_SCHEMA)) {
      expect(row.env).toMatch(/^[A-Z][A-Z0-9_]+$/);
      expect(row.description.length).toBeGreaterThan(10);
    }
  });
});
