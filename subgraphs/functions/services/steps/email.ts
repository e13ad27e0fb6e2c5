// `Email`: renders one of the project's e-mail templates with variables and queues it for sending
// (a `functions.email.send` job). `{"kind": "Email", "template": "welcome", "to": "{{input.body.email}}", "variables": {...}}`
import { AppError } from '../../../../platform/errors.ts';
import { templateField } from './fields.ts';
import { StepFailure, StepFieldError, type StepKind } from './types.ts';

export const emailStep: StepKind = {
  kind: 'Email',
  description: '`template` (a template name), `to` (an address or a list), `variables`; sent by a queued job',
  fields: ['template', 'to', 'variables'],
  prepare(step) {
    if (typeof step.template !== 'string' || step.template.trim() === '')
      throw new StepFieldError('template', 'is required: the name of an e-mail template');
    if (step.to === undefined || step.to === '' || (Array.isArray(step.to) && step.to.length === 0))
      throw new StepFieldError('to', 'is required: an address or a list of addresses');
    if (typeof step.to !== 'string' && !Array.isArray(step.to))
      throw new StepFieldError('to', 'must be an address or a list of addresses');
    if (
      step.variables !== undefined &&
      (step.variables === null || typeof step.variables !== 'object' || Array.isArray(step.variables))
    ) {
      throw new StepFieldError('variables', 'must be an object');
    }
    const templates = {
      template: templateField(step, 'template', { required: true }),
      to: templateField(step, 'to', { required: true }),
      variables: templateField(step, 'variables', { fallback: {} }),
    };
    return {
      templates,
      async run(resolved, ctx) {
        const list = (Array.isArray(resolved.to) ? resolved.to : [resolved.to]).filter(
          (a) => a !== null && a !== undefined && a !== '',
        );
        const to = list.map(String);
        if (to.length === 0) throw new StepFailure('BAD_REQUEST', 'to: no recipient');
        const bad = to.find((a) => !/^[^\s@<>]+@[^\s@<>]+$/.test(a));
        if (bad) throw new StepFailure('BAD_REQUEST', `to: "${bad}" is not an e-mail address`);
        const variables =
          resolved.variables && typeof resolved.variables === 'object'
            ? (resolved.variables as Record<string, unknown>)
            : {};
        try {
          return {
            body: await ctx.deps.email(
              ctx.projectId,
              { template: String(resolved.template), to, variables },
              ctx.dryRun,
            ),
          };
        } catch (err) {
          // Mail goes out only through the project's own SMTP settings: without them the caller is told so (409).
          if (err instanceof AppError && err.code === 'EMAIL_NOT_CONFIGURED')
            throw new StepFailure(err.code, err.message, false, err.code);
          throw new StepFailure('EMAIL_FAILED', (err as Error).message);
        }
      },
    };
  },
};
