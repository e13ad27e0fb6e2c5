// Every benchmark case, in the order they run. One file per case.
import type { BenchCase } from './types.ts';
import { s1 } from './s1-authenticated-read.ts';
import { p1Floor } from './p1-floor.ts';
import { p1Parse } from './p1-parse.ts';
import { p2Floor } from './p2-floor.ts';
import { p2Parse } from './p2-parse.ts';
import { p4Token } from './p4-token.ts';
import { p4Introspect } from './p4-introspect.ts';
import { p5Login } from './p5-login.ts';
import { p7 } from './p7-upload.ts';

export type { BenchCase, BenchContext, Target } from './types.ts';

export const CASES: BenchCase[] = [s1, p1Floor, p1Parse, p2Floor, p2Parse, p4Token, p4Introspect, p5Login, p7];
