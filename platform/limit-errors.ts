// The answers of a plan's limits (issue 28), one shape for every domain: a count reached (409 PLAN_LIMIT_REACHED,
// `details: {limit, max}`) and a consumption quota used up (413 QUOTA_EXCEEDED, `details: {limit, max, used}`). The
// message names the plan, the limit's plan field and that the operator can raise it.
import { AppError } from './errors.ts';

/** `what` is the counted thing in the plural ("pending uploads"); `limit` the plan field, snake_case. */
export function planLimitReached(planId: string | null, limit: string, max: number, what: string): AppError {
  return new AppError(
    'PLAN_LIMIT_REACHED',
    `The ${planId ?? 'project’s'} plan allows ${max} ${what} per project (${limit}); the operator can raise it`,
    { limit, max },
  );
}

/** A consumption quota used up: `amount(n)` says n in words ("50 database rows", "8388608 bytes of database"). */
export function quotaExceeded(
  planId: string | null,
  limit: string,
  max: number,
  used: number,
  amount: (n: number) => string,
): AppError {
  return new AppError(
    'QUOTA_EXCEEDED',
    `The ${planId ?? 'project’s'} plan allows ${amount(max)} per project (${limit}) and ${amount(used)} are used: delete some, or ask the operator to raise it`,
    { limit, max, used },
  );
}
