// TOTP codes for tests, without waiting for the clock where the platform does not need it.
import { generate } from 'otplib';
import { waitFor } from './wait-for.ts';

const STEP_SECONDS = 30;
/** The time step each code this helper handed out belongs to (`secret:code`). */
const stepOfCode = new Map<string, number>();
const stepNow = () => Math.floor(Date.now() / 1000 / STEP_SECONDS);

/**
 * A TOTP code of a time step later than `last`'s (the platform refuses a code at or before the last step it
 * accepted), without waiting when it can: the platform accepts the previous, current and next step, so the current
 * step and the next are both good now and stay good across one step boundary (a previous step's code would not).
 * Only a third code in a row waits for the clock, until its step is at most the next one.
 */
export async function nextCode(secret: string, last?: string): Promise<string> {
  let step = stepNow();
  if (last !== undefined) {
    let lastStep = stepOfCode.get(`${secret}:${last}`);
    if (lastStep === undefined)
      for (const s of [step - 1, step, step + 1])
        if ((await generate({ secret, epoch: s * STEP_SECONDS })) === last) lastStep = s;
    step = Math.max(step, (lastStep ?? step) + 1);
  }
  if (step > stepNow() + 1)
    await waitFor(() => step <= stepNow() + 1, {
      timeoutMs: 31_000,
      intervalMs: 250,
      message: 'the TOTP time step before the one needed',
    });
  const code = await generate({ secret, epoch: step * STEP_SECONDS });
  stepOfCode.set(`${secret}:${code}`, step);
  return code;
}
