import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { CONFIG_SCHEMA } from '../../platform/config.ts';

const readme = fs.readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

describe('the README', () => {
  it('has a configuration table row for every config setting, with its default and description', () => {
    const table = readme.split('<!-- config-table:start -->')[1]!.split('<!-- config-table:end -->')[0]!;
    const rows = table.split('\n').filter((l) => l.startsWith('| `'));
    const expected = Object.values(CONFIG_SCHEMA).map(
      (r) => `| \`${r.env}\` | ${r.default ? `\`${r.default}\`` : ''} | ${r.description} |`,
    );
    expect(rows).toEqual(expected);
  });

  it('gives the quickstart test command that CI runs', () => {
    expect(readme).toMatch(/^npm test\s/m);
    expect(fs.readFileSync(new URL('../../.ci/run', import.meta.url), 'utf8')).toMatch(/cmd=\(npm test\)/);
  });

  it('names the quick tier for the edit-test loop, which package.json runs', () => {
    expect(readme).toContain('`npm run test:quick`');
    const scripts = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')).scripts;
    expect(scripts['test:quick']).toMatch(/TESSERA_TEST_TIER=quick .*jest/);
    expect(scripts['test:server']).toMatch(/TESSERA_TEST_TIER=server .*jest/);
  });
});
