// `Invoke`: runs another function of the project, by name. With `async: true` it is queued (its own
// execution, trigger `function`) and the step's output is `{execution_id, status}` at once: the way to
// answer a webhook quickly and hand the long work on. Otherwise the output is the other function's output.
// `input` defaults to this function's own input.
import { booleanField, templateField } from './fields.ts';
import { StepFailure, StepFieldError, type StepKind } from './types.ts';

export const invokeStep: StepKind = {
  kind: 'Invoke',
  description: '`function` (a name), `input` (a template; default: this input), `async` (queue it and go on)',
  fields: ['function', 'input', 'async'],
  prepare(step) {
    if (typeof step.function !== 'string' || step.function.trim() === '')
      throw new StepFieldError('function', 'is required: the name of a function of this project');
    const async = booleanField(step, 'async', false);
    const templates = {
      function: templateField(step, 'function', { required: true }),
      input: templateField(step, 'input', { fallback: '{{ input }}' }),
    };
    return {
      templates,
      async run(resolved, ctx) {
        try {
          return (await ctx.deps.invoke(ctx, {
            function: String(resolved.function),
            input: resolved.input ?? null,
            async,
          })) as { body: unknown };
        } catch (err) {
          if (err instanceof StepFailure) throw err;
          throw new StepFailure('INVOKE_FAILED', (err as Error).message);
        }
      },
    };
  },
};
