// The step kinds, by name. A new kind is one file of this folder and one line here.
import { databaseStep } from './database.ts';
import { emailStep } from './email.ts';
import { httpStep } from './http.ts';
import { invokeStep } from './invoke.ts';
import { transformStep } from './transform.ts';
import type { StepKind } from './types.ts';

export const STEP_KINDS: Record<string, StepKind> = Object.fromEntries(
  [transformStep, databaseStep, httpStep, emailStep, invokeStep].map((k) => [k.kind, k]),
);

export type { StepKind, StepDefinition, PreparedStep, StepRunContext, StepDeps } from './types.ts';
export { StepFailure, StepFieldError } from './types.ts';
