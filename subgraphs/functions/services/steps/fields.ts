// Field checks shared by the step kinds.
import { compileTemplate, TemplateError, type Template } from '../templates.ts';
import { StepFieldError, type StepDefinition } from './types.ts';

/** Compiles `step[field]` as a template; a bad template is a StepFieldError at its path. */
export function templateField(
  step: StepDefinition,
  field: string,
  opts: { required?: boolean; fallback?: unknown } = {},
): Template {
  const value = step[field];
  if (value === undefined) {
    if (opts.required) throw new StepFieldError(field, 'is required');
    return compileTemplate(opts.fallback ?? null, field);
  }
  return compileChecked(value, field);
}

/** Compiles any value as a template at `path`. */
export function compileChecked(value: unknown, path: string): Template {
  try {
    return compileTemplate(value, path);
  } catch (err) {
    if (err instanceof TemplateError) throw new StepFieldError(err.path || path, err.message);
    throw err;
  }
}

/** A plain object field (or undefined). */
export function objectField(step: StepDefinition, field: string): Record<string, unknown> | undefined {
  const v = step[field];
  if (v === undefined) return undefined;
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new StepFieldError(field, 'must be an object');
  return v as Record<string, unknown>;
}

/** A boolean field (or the fallback). */
export function booleanField(step: StepDefinition, field: string, fallback: boolean): boolean {
  const v = step[field];
  if (v === undefined) return fallback;
  if (typeof v !== 'boolean') throw new StepFieldError(field, 'must be true or false');
  return v;
}
