// Bench set-up of functions through the public API.
import { client } from '../../tests/support/http.ts';
import type { BenchContext } from '../cases/types.ts';

/** Creates function `name` in the project of `apiKey`: one Transform step `out` answering `expression`. */
export async function oneStepFunction(
  ctx: BenchContext,
  apiKey: string,
  name: string,
  expression: Record<string, unknown>,
): Promise<void> {
  const fn = await client(ctx.tessera)('POST', '/edge/api/v1/functions', {
    apiKey,
    body: { name, steps: [{ name: 'out', kind: 'Transform', expression }] },
  });
  if (fn.status !== 201) throw new Error(`create function ${name}: ${fn.status} ${JSON.stringify(fn.body)}`);
}
