import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import { discoverPgTools, parseToolVersion, pgToolPath, pgToolsFor } from './pg-tools.ts';

describe('pg-tools', () => {
  const dirs: string[] = [];
  const fakeTools = (version: string): string => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-pg-tools-'));
    dirs.push(dir);
    for (const tool of ['pg_dump', 'pg_restore'])
      fs.writeFileSync(path.join(dir, tool), `#!/bin/sh\necho "${tool} (PostgreSQL) ${version}"\n`, { mode: 0o755 });
    return dir;
  };
  afterAll(() => dirs.forEach((d) => fs.rmSync(d, { recursive: true, force: true })));

  it.each([
    ['pg_dump (PostgreSQL) 15.20 (Debian 15.20-0+deb12u1)', 15],
    ['pg_dump (PostgreSQL) 18.4', 18],
    ['pg_dump (PostgreSQL) 9.6.24', 9.6],
    ['pg_dump (PostgreSQL) 17devel', 17],
    ['something else', undefined],
  ])('reads the major version of "%s"', (out, major) => {
    expect(parseToolVersion(out)).toBe(major);
  });

  it('takes a configured folder only, and says when its tools are older than the servers', () => {
    const old = fakeTools('12.22');
    expect(discoverPgTools(old)).toEqual([{ dir: old, major: 12 }]);
    expect(pgToolPath(old, 'pg_restore')).toBe(path.join(old, 'pg_restore'));
    expect(pgToolsFor(old, 12)).toEqual({ tools: { dir: old, major: 12 } });
    expect(pgToolsFor(old, 15)).toEqual({
      newest: 12,
      problem: `pg_dump 12 (${old}) is older than the servers (PostgreSQL 15): set TESSERA_PG_BIN to the tools of PostgreSQL 15 or newer`,
    });
  });

  it('says so when a configured folder has no tools', () => {
    const empty = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-pg-tools-'));
    dirs.push(empty);
    expect(discoverPgTools(empty)).toEqual([]);
    expect(pgToolsFor(empty, 15).problem).toMatch(/^no pg_dump\/pg_restore found/);
  });
});
