// Every benchmark case, in the order they run. One file per case.
import type { BenchCase } from './types.ts';
import { s1 } from './s1-authenticated-read.ts';

export type { BenchCase, BenchContext, Target } from './types.ts';

export const CASES: BenchCase[] = [s1];
