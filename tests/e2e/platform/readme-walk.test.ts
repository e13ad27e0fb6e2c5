// The README's "From a fresh start" block, run by bash exactly as written (issue 27, 6): against a live Tessera it
// signs up, signs in and creates a project, and the variables it leaves (TOKEN, PROJECT_ID, API_KEY,
// PUBLISHABLE_KEY, CLIENT_ID, CLIENT_SECRET) work for the calls the later examples make with them.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';

const README = new URL('../../../README.md', import.meta.url);

/** The first bash block after the heading `### From a fresh start`. */
function freshStartBlock(): string {
  const text = fs.readFileSync(README, 'utf8');
  const at = text.indexOf('### From a fresh start');
  if (at < 0) throw new Error('README has no "From a fresh start" section');
  const m = /```bash\n([\s\S]*?)```/.exec(text.slice(at));
  if (!m) throw new Error('no bash block in "From a fresh start"');
  return m[1]!;
}

let platform: TestPlatform;
beforeAll(async () => {
  platform = await startOneProcess();
}, 90_000);
afterAll(async () => {
  await platform?.close();
});

describe('the README walk-through', () => {
  it('runs as written and leaves variables the later examples can use', async () => {
    const script = `set -euo pipefail\n${freshStartBlock()}
curl -sf $BASE/auth/api/v1/projects/$PROJECT_ID -H "Authorization: Bearer $TOKEN" >/dev/null
curl -sf -X POST $BASE/v1/rawSQL -H "X-Api-Key: $API_KEY" -H 'content-type: application/json' -d '{"sql": "select 1 as one"}' | jq -c .rows
curl -sf -X POST $BASE/token -u "$CLIENT_ID:$CLIENT_SECRET" -d grant_type=client_credentials | jq -r .token_type
test -n "$PUBLISHABLE_KEY"
`;
    const { stdout } = await promisify(execFile)('bash', ['-c', script], {
      env: { PATH: process.env.PATH, BASE: platform.url },
      timeout: 60_000,
    });
    const lines = stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^project [0-9a-f-]{36}, client \S+$/);
    expect(lines.slice(1)).toEqual(['[{"one":1}]', 'Bearer']);
  });
});
