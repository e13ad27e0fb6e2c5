// Lints the OpenAPI document with Redocly's linter (@redocly/openapi-core, the engine of Redocly CLI) and its
// `recommended` rules: `npm run openapi:lint` (CI runs it, and tests/unit/openapi.test.ts). Exits 1 on any error.
import { createConfig, lintFromString, type NormalizedProblem } from '@redocly/openapi-core';
import { openApiDocument } from './openapi.ts';

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

if (import.meta.url === `file://${process.argv[1]}`) {
  const problems = await lintOpenApi();
  for (const p of problems) console.log(`${p.severity} ${p.ruleId} ${p.location[0]?.pointer ?? ''}: ${p.message}`);
  const errors = problems.filter((p) => p.severity === 'error').length;
  console.log(`openapi lint (Redocly recommended): ${errors} errors, ${problems.length - errors} warnings`);
  process.exit(errors > 0 ? 1 : 0);
}
