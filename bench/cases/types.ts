// What a benchmark case is: it sets up its data and names the two targets driven with the same load.
import type { ChildProcess } from 'node:child_process';

export type Target = { url: string; method: 'GET' | 'POST' | 'PUT'; headers?: Record<string, string>; body?: string | Buffer };

export type BenchContext = {
  /** Base URL of Tessera (one-process mode). */
  tessera: string;
  /** Base URL of the node:http + pg floor (bench/peers/floor.ts). */
  floor: string;
  /** The database both use. */
  databaseUrl: string;
  /** Starts a peer process (killed when the run ends). */
  spawnPeer: (args: string[], env: Record<string, string>, ready: RegExp | string) => Promise<{ child: ChildProcess; output: () => string }>;
};

/** An HTTP case is driven by autocannon on both targets; a custom case measures itself. */
export type BenchCase = {
  id: string;
  title: string;
  peer: string;
  goal: string;
  setup: (ctx: BenchContext) => Promise<{ tessera: Target; peer: Target }>;
};
