// A plan-limits reader over a plan a test holds (for unit and integration tests of a limit's enforcement without
// tenant management): change `plan` and the next read sees it, as an operator's broadcast change would.
import {
  NO_LIMITS,
  type PlanLimitValues,
  type PlanLimitsReader,
  type ProjectPlan,
} from '../../platform/plan-limits.ts';

export type HeldPlan = { plan: ProjectPlan; reader: PlanLimitsReader };

/** A reader answering `limits` (the rest: no limit) for every project. */
export function heldPlan(limits: Partial<PlanLimitValues>, suspended: ProjectPlan['suspended'] = null): HeldPlan {
  const held: HeldPlan = {
    plan: { planId: 'test', limits: { ...NO_LIMITS, ...limits }, suspended },
    reader: {
      peek: () => held.plan.limits,
      get: async () => held.plan.limits,
      peekPlan: () => held.plan,
      plan: async () => held.plan,
      clear: () => undefined,
      listen: async () => undefined,
      stop: async () => undefined,
    },
  };
  return held;
}
