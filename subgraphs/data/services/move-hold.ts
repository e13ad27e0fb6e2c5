// The write hold of a move (issue 29): while a project's copy catches up and its row is switched, no write may reach
// its source. The mover broadcasts `data.project.hold` (every data process, its own too, hears it) and then fences the
// source itself (moves.ts takes a write-blocking table lock there, which waits for every write already under way); a
// write arriving in any process while the hold lasts waits for its end (`data.project.released`, sent after the switch
// was committed and announced, or after a failed move) and then runs on the server the project's row names, or, past
// HOLD_WAIT_MS, is answered 503 SERVICE_UNAVAILABLE with `Retry-After`. Reads are never held: the source stays readable
// until the switch. A hold ends by itself after its TTL, so a mover that died cannot keep a project from writing (its
// table lock went with its connection).
import { AppError } from '../../../platform/errors.ts';

/** How long a write waits for a hold to end before it is answered 503 (Retry-After: 1). */
export const HOLD_WAIT_MS = 5_000;
/** A hold's life unless released: longer than any catch-up and switch should take; the mover fails past it. */
export const HOLD_TTL_MS = 15_000;

type Held = { until: number; wake: Set<() => void>; timer: NodeJS.Timeout };

export type MoveHolds = ReturnType<typeof createMoveHolds>;

/**
 * The holds this process knows of. `followMove` runs before waiting writes go on after a switch (the project's cached
 * role and connections are dropped, so they run on the new server).
 */
export function createMoveHolds(opts: { followMove: (projectId: string) => Promise<void>; waitMs?: number }) {
  const holds = new Map<string, Held>();
  const waitMs = opts.waitMs ?? HOLD_WAIT_MS;
  // Moves whose hold ended: a renewal heard after the release (broadcasts reach a process twice, and in no set order
  // across publishers) must not hold the project again.
  const released = new Set<string>();
  const remember = (moveId: string): void => {
    released.add(moveId);
    if (released.size > 1_000) released.delete(released.values().next().value!);
  };

  const end = (projectId: string): void => {
    const h = holds.get(projectId);
    if (!h) return;
    holds.delete(projectId);
    clearTimeout(h.timer);
    for (const wake of h.wake) wake();
  };

  return {
    /** `data.project.hold`: writes of the project wait from now on, for `ttlMs` at most. */
    hold(projectId: string, moveId: string, ttlMs = HOLD_TTL_MS): void {
      if (released.has(moveId)) return;
      const known = holds.get(projectId);
      if (known) clearTimeout(known.timer);
      const h: Held = known ?? { until: 0, wake: new Set(), timer: undefined as unknown as NodeJS.Timeout };
      h.until = Date.now() + ttlMs;
      h.timer = setTimeout(() => end(projectId), ttlMs);
      h.timer.unref();
      holds.set(projectId, h);
    },

    /** `data.project.released`: when the project moved (`movedTo`), its role and connections follow first. */
    async release(projectId: string, moveId: string, movedTo?: string): Promise<void> {
      remember(moveId);
      if (movedTo) await opts.followMove(projectId).catch(() => {});
      end(projectId);
    },

    /** Whether the project's writes are held here now. */
    isHeld: (projectId: string): boolean => holds.has(projectId),

    /** Before a write: returns at once when the project is not held; else waits for the hold's end, or answers 503. */
    async beforeWrite(projectId: string): Promise<void> {
      const h = holds.get(projectId);
      if (!h) return;
      let wake!: () => void;
      const released = new Promise<boolean>((resolve) => (wake = () => resolve(true)));
      h.wake.add(wake);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), waitMs)));
      try {
        if (await Promise.race([released, timedOut])) return;
      } finally {
        clearTimeout(timer);
        h.wake.delete(wake);
      }
      throw new AppError(
        'SERVICE_UNAVAILABLE',
        "The project's database is being moved to another server: writes are held for a moment; retry shortly",
        { retry_after: 1, reason: 'project_moving' },
      );
    },
  };
}
