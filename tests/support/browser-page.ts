// Small waiting and checking helpers for the real-browser tests (playwright-core has no web-first assertions; these
// are their small equivalent), and the axe-core scan every dashboard page passes.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import type { Locator, Page } from 'playwright-core';
import { waitFor } from './wait-for.ts';

const AXE = fs.readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Polls `read` until `ok` holds. */
export async function until<T>(
  read: () => Promise<T>,
  ok: (v: T) => boolean,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  let last: T | undefined;
  const seen = async () => {
    last = await read().catch(() => last); // not there yet
    return last !== undefined && ok(last) ? { value: last } : undefined;
  };
  const found = await waitFor(seen, { timeoutMs, intervalMs: 100, message: what }).catch((e: Error) => {
    throw new Error(`${e.message}; last seen: ${JSON.stringify(last)}`);
  });
  return found.value;
}

const matches = (v: string, m: string | RegExp) => (typeof m === 'string' ? v.includes(m) : m.test(v));

/** Waits until the locator is visible. */
export const shown = async (l: Locator) => void (await l.first().waitFor({ state: 'visible' }));

/** Waits until no element of the locator is visible. */
export const gone = async (l: Locator) =>
  void (await until(
    () => l.count().then(async (n) => n === 0 || !(await l.first().isVisible())),
    Boolean,
    `${l} to disappear`,
  ));

/** Waits until the (first) element's text is exactly `m` (or matches the expression). */
export const textIs = async (l: Locator, m: string | RegExp) =>
  void (await until(
    () => l.first().innerText(),
    (v) => (typeof m === 'string' ? v.trim() === m : m.test(v.trim())),
    `${l} to read ${m}`,
  ));

/** Waits until the (first) element's text contains `m`. */
export const contains = async (l: Locator, m: string | RegExp) =>
  void (await until(
    () => l.first().innerText(),
    (v) => matches(v, m),
    `${l} to contain ${m}`,
  ));

/** Waits until the locator has `n` elements. */
export const count = async (l: Locator, n: number) =>
  void (await until(
    () => l.count(),
    (c) => c === n,
    `${n} of ${l}`,
  ));

/** axe-core on the page: the serious and critical violations (WCAG 2 A and AA rules). */
export async function axe(page: Page): Promise<{ id: string; impact: string; nodes: string[] }[]> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ content: AXE });
  const result = await page.evaluate(async () => {
    const r = await (
      window as unknown as {
        axe: {
          run: (
            ctx: Document,
            opts: unknown,
          ) => Promise<{ violations: { id: string; impact: string; nodes: { target: string[] }[] }[] }>;
        };
      }
    ).axe.run(document, {
      runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'] },
    });
    return r.violations.map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.map((n) => n.target.join(' ')) }));
  });
  return result.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
