// Lints the OpenAPI document with two linters, each at 0 warnings: Redocly's (@redocly/openapi-core, the engine of
// Redocly CLI) with its `recommended` rules, then Spectral's CLI with `spectral:oas`; redocly.yaml and .spectral.yaml
// say which rule is off and why. `npm run openapi:lint` (CI runs it; tests/unit/openapi.test.ts runs both). Exits 1 on
// any problem of either.
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { lintFromString, loadConfig, type NormalizedProblem } from '@redocly/openapi-core';
import { openApiDocument } from './openapi.ts';

const ROOT = path.resolve(import.meta.dirname, '..');

/** The linter's problems with the document, under the rules of redocly.yaml (which says why one rule is off). */
export async function lintOpenApi(doc: Record<string, unknown> = openApiDocument()): Promise<NormalizedProblem[]> {
  const config = await loadConfig({ configPath: path.join(ROOT, 'redocly.yaml') });
  return await lintFromString({ source: JSON.stringify(doc), absoluteRef: '/openapi.json', config });
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
  console.log(
    `openapi lint (Redocly recommended, redocly.yaml): ${errors} errors, ${problems.length - errors} warnings`,
  );
  const spectral = spectralLint(doc);
  if (spectral.report) console.log(spectral.report);
  console.log(`openapi lint (Spectral spectral:oas): ${spectral.ok ? 'no problems' : 'problems above'}`);
  process.exit(problems.length > 0 || !spectral.ok ? 1 : 0);
}
