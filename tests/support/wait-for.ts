// The one polling helper of the suite: tests wait for the condition they assert, never for a fixed time.

export interface WaitForOptions {
  /** How long to keep asking before failing (default 15 s). */
  timeoutMs?: number;
  /** Pause between two asks (default 50 ms). */
  intervalMs?: number;
  /** What is awaited, for the timeout's error message. */
  message?: string;
}

type Done<T> = Exclude<T, undefined | null | false>;

/**
 * Asks `condition` until it answers something other than undefined, null or false, and answers that value;
 * throws after `timeoutMs` naming `message` and the last answer. An error thrown by `condition` ends the wait at once.
 */
export async function waitFor<T>(condition: () => T | Promise<T>, options: WaitForOptions = {}): Promise<Done<T>> {
  const { timeoutMs = 15_000, intervalMs = 50, message = 'the condition' } = options;
  const until = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== null && value !== false) return value as Done<T>;
    if (Date.now() >= until)
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${message} (last answer: ${String(value)})`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
