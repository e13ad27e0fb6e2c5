// Lints the OpenAPI document with two linters, each at 0 warnings: Redocly's (@redocly/openapi-core, the engine of
// Redocly CLI) with its `recommended` rules, then Spectral's CLI with `spectral:oas` (.spectral.yaml says which rule
// is off and why): `npm run openapi:lint` (CI runs it; tests/unit/openapi.test.ts runs Redocly's). Exits 1 on any
// problem of either.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { openApiDocument } from './openapi.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/**
 * Warnings accepted on purpose: `POST /authorize` is the hosted sign-in form, which answers with a redirect (302)
 * or the form again, never a 2xx JSON body; so is `POST /authorize/sign-up`, the hosted sign-up form.
 */
export const ACCEPTED_WARNINGS = new Set([
  'operation-2xx-response #/paths/~1authorize/post/responses',
  'operation-2xx-response #/paths/~1authorize~1sign-up/post/responses',
]);

/** The linter's problems with the document, accepted warnings left out. */
export async function lintOpenApi(doc: Record<string, unknown> = openApiDocument()): Promise<NormalizedProblem[]> {
  const config = await createConfig({ extends: ['recommended'] });
  const problems = await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
  return problems.filter((p) => !ACCEPTED_WARNINGS.has(`${p.ruleId} ${p.location[0]?.pointer ?? ''}`));
}

/** Spectral's CLI over the document with the repository's ruleset: its report lines, empty when clean. */
export function spectralLint(
  doc: Record<string, unknown> = openApiDocument(),
  bin = path.join(ROOT, 'node_modules', '.bin', 'spectral'),
): { ok: boolean; report: string } {
  if (!fs.existsSync(bin))
    return {
      ok: false,
      report: 'spectral is not installed: run `npm ci` (@stoplight/spectral-cli is a devDependency)',
    };
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tessera-openapi-'));
  try {
    const file = path.join(dir, 'openapi.json');
    fs.writeFileSync(file, JSON.stringify(doc, null, 2));
    const r = spawnSync(
      bin,
      ['lint', file, '--ruleset', path.join(ROOT, '.spectral.yaml'), '--fail-severity', 'hint', '--format', 'text'],
      { encoding: 'utf8' },
    );
    const report = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
    return { ok: r.status === 0, report };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const doc = openApiDocument();
  const problems = await lintOpenApi(doc);
  for (const p of problems) console.log(`${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
  const errors = problems.filter((p) => p.severity === 'error').length;
  console.log(`openapi lint (Redocly recommended): ${errors} errors, ${problems.length - errors} warnings`);
  const spectral = spectralLint(doc);
  if (spectral.report) console.log(spectral.report);
  console.log(`openapi lint (Spectral spectral:oas): ${spectral.ok ? 'no problems' : 'problems above'}`);
  process.exit(problems.length > 0 || !spectral.ok ? 1 : 0);
}
