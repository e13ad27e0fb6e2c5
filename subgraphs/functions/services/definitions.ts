// The rules of a function definition, checked when it is saved: names, unique step names, known kinds,
// templates that parse, and `steps.X` reading only earlier steps. Errors name the step and the field.
import { AppError, errors } from '../../../platform/errors.ts';
import { compileChecked } from './steps/fields.ts';
import { STEP_KINDS, StepFieldError, type PreparedStep, type StepDefinition } from './steps/index.ts';
import type { Template } from './templates.ts';

export const FUNCTION_NAME = /^[A-Za-z][A-Za-z0-9_-]{0,63}$/;
export const SLUG = /^[a-z0-9][a-z0-9-]{0,63}$/;
const STEP_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,63}$/;
const COMMON_FIELDS = ['name', 'kind', 'when', 'return', 'retries'];
export const MAX_STEPS = 50;
export const TIMEOUT_DEFAULT_MS = 10_000;
export const TIMEOUT_MAX_MS = 300_000;
export const RETRIES_MAX = 10;
export const DESCRIPTION_MAX = 1000;

export type FunctionInput = {
  name?: unknown;
  slug?: unknown;
  description?: unknown;
  steps?: unknown;
  timeoutMs?: unknown;
  retries?: unknown;
  public?: unknown;
};
/** `public`: the publishable key and end-users may invoke it (otherwise the secret API key only). */
export type FunctionDefinition = {
  name: string;
  slug: string;
  description: string;
  steps: StepDefinition[];
  timeoutMs: number;
  retries: number;
  public: boolean;
};

/** A step compiled for running: its definition, its kind's prepared form, and its `when`. */
export type CompiledStep = {
  def: StepDefinition;
  prepared: PreparedStep;
  when: Template | undefined;
  retries: number;
  returns: boolean;
};

function stepError(index: number, step: string | undefined, field: string, message: string): AppError {
  const label = step ? `steps[${index}] "${step}"` : `steps[${index}]`;
  return new AppError('VALIDATION_FAILED', `${label}: ${field}: ${message}`, { step: step ?? index, field, index });
}

/** A function name as used in `/invoke/:name`. */
export function checkFunctionName(value: unknown, field = 'name'): string {
  const name = typeof value === 'string' ? value.trim() : '';
  if (!FUNCTION_NAME.test(name))
    throw errors.validation(field, 'must start with a letter and use letters, digits, - and _ (at most 64 characters)');
  return name;
}

/** A slug as used in webhook paths. */
export function checkSlug(value: unknown, field = 'slug'): string {
  const slug = typeof value === 'string' ? value.trim() : '';
  if (!SLUG.test(slug))
    throw errors.validation(
      field,
      'must use lower-case letters, digits and - (at most 64 characters, not starting with -)',
    );
  return slug;
}

function wholeNumber(value: unknown, field: string, min: number, max: number, fallback: number): number {
  if (value === undefined || value === null) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max)
    throw errors.validation(field, `must be a whole number from ${min} to ${max}`);
  return value;
}

/** Compiles the steps of a definition (also used to run saved functions). Throws VALIDATION_FAILED {step, field}. */
export function compileSteps(raw: unknown, defaultRetries: number): CompiledStep[] {
  if (!Array.isArray(raw)) throw errors.validation('steps', 'must be a list of steps');
  if (raw.length === 0) throw errors.validation('steps', 'must have at least one step');
  if (raw.length > MAX_STEPS) throw errors.validation('steps', `must have at most ${MAX_STEPS} steps`);
  const seen = new Set<string>();
  const out: CompiledStep[] = [];
  raw.forEach((item, index) => {
    if (item === null || typeof item !== 'object' || Array.isArray(item))
      throw stepError(index, undefined, 'step', 'must be an object {name, kind, ...}');
    const step = item as StepDefinition;
    if (typeof step.name !== 'string' || !STEP_NAME.test(step.name)) {
      throw stepError(
        index,
        typeof step.name === 'string' ? step.name : undefined,
        'name',
        'must be an identifier (letters, digits, _; not starting with a digit; at most 64 characters)',
      );
    }
    const name = step.name;
    if (seen.has(name)) throw stepError(index, name, 'name', 'is used by an earlier step: step names must be unique');
    const kind = typeof step.kind === 'string' ? STEP_KINDS[step.kind] : undefined;
    if (!kind) throw stepError(index, name, 'kind', `must be one of ${Object.keys(STEP_KINDS).join(', ')}`);
    for (const key of Object.keys(step)) {
      if (!COMMON_FIELDS.includes(key) && !kind.fields.includes(key))
        throw stepError(
          index,
          name,
          key,
          `is not a field of a ${kind.kind} step (${[...COMMON_FIELDS, ...kind.fields].join(', ')})`,
        );
    }
    if (step.return !== undefined && typeof step.return !== 'boolean')
      throw stepError(index, name, 'return', 'must be true or false');
    let retries = defaultRetries;
    if (step.retries !== undefined) {
      if (
        typeof step.retries !== 'number' ||
        !Number.isInteger(step.retries) ||
        step.retries < 0 ||
        step.retries > RETRIES_MAX
      ) {
        throw stepError(index, name, 'retries', `must be a whole number from 0 to ${RETRIES_MAX}`);
      }
      retries = step.retries;
    }
    let prepared: PreparedStep;
    let when: Template | undefined;
    try {
      prepared = kind.prepare(step);
      when = step.when === undefined ? undefined : compileChecked(step.when, 'when');
    } catch (err) {
      if (err instanceof StepFieldError) throw stepError(index, name, err.field, err.message);
      throw err;
    }
    const templates: [string, Template][] = [
      ...Object.entries(prepared.templates),
      ...(when ? [['when', when] as [string, Template]] : []),
    ];
    for (const [field, template] of templates) {
      for (const ref of template.stepRefs) {
        if (ref === name)
          throw stepError(index, name, field, `reads steps.${ref}, its own result: a step can only read earlier steps`);
        if (!seen.has(ref)) {
          const later = raw.slice(index + 1).some((s) => (s as StepDefinition | null)?.name === ref);
          throw stepError(
            index,
            name,
            field,
            later
              ? `reads steps.${ref}, which runs later: a step can only read earlier steps`
              : `reads steps.${ref}, and there is no earlier step named "${ref}"`,
          );
        }
      }
    }
    seen.add(name);
    out.push({ def: step, prepared, when, retries, returns: step.return === true });
  });
  return out;
}

/** Checks a whole definition (create and update); the slug defaults to the name in lower case. */
export function checkDefinition(input: FunctionInput): FunctionDefinition & { compiled: CompiledStep[] } {
  const name = checkFunctionName(input.name);
  const slug =
    input.slug === undefined || input.slug === null
      ? checkSlug(name.toLowerCase().replace(/_/g, '-'), 'slug')
      : checkSlug(input.slug);
  if (input.description !== undefined && input.description !== null && typeof input.description !== 'string')
    throw errors.validation('description', 'must be a string');
  const description = typeof input.description === 'string' ? input.description.trim() : '';
  if (description.length > DESCRIPTION_MAX)
    throw errors.validation('description', `must be at most ${DESCRIPTION_MAX} characters`);
  const timeoutMs = wholeNumber(input.timeoutMs, 'timeout_ms', 1, TIMEOUT_MAX_MS, TIMEOUT_DEFAULT_MS);
  const retries = wholeNumber(input.retries, 'retries', 0, RETRIES_MAX, 0);
  if (input.public !== undefined && input.public !== null && typeof input.public !== 'boolean')
    throw errors.validation('public', 'must be true or false');
  const compiled = compileSteps(input.steps, retries);
  return {
    name,
    slug,
    description,
    steps: compiled.map((c) => c.def),
    timeoutMs,
    retries,
    public: input.public === true,
    compiled,
  };
}
