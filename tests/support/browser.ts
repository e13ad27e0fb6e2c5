// Headless chromium for the browser tests and the dashboard bench: Debian's chromium driven by playwright-core (its
// own browser downloads cannot reach the internet here; see ../shared/DESIGN.md §10).
import fs from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = '/usr/bin/chromium';
/** The flags known to work on these machines (no sandbox as root; no background connections to a closed network). */
export const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** Fails, saying what to install, when chromium is not on the machine (call it before slow set-up). */
export function requireChromium(): void {
  if (!fs.existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: apt-get install -y chromium (.ci/run does)`);
}

/** Launches headless chromium with CHROMIUM_FLAGS. */
export async function launchChromium(): Promise<Browser> {
  requireChromium();
  return await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_FLAGS, headless: true });
}
