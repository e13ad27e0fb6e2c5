// Every benchmark case, in the order they run. One file per case.
import type { BenchCase } from './types.ts';
import { s1 } from './s1-authenticated-read.ts';
import { p1Floor } from './p1-floor.ts';
import { p1Parse } from './p1-parse.ts';
import { p2Floor } from './p2-floor.ts';
import { p2Parse } from './p2-parse.ts';
import { p3 } from './p3-graphql.ts';
import { p4Token } from './p4-token.ts';
import { p4Introspect } from './p4-introspect.ts';
import { p5Login } from './p5-login.ts';
import { p6 } from './p6-webhook.ts';
import { p7 } from './p7-upload.ts';
import { p8Drain } from './p8-drain.ts';
import { p8Cron } from './p8-cron.ts';
import { p9 } from './p9-projects.ts';
import { p9Fleet } from './p9-fleet.ts';
import { f1Move } from './f1-move.ts';
import { p10 } from './p10-vector.ts';
import { p10Server } from './p10-server.ts';
import { c1Client } from './c1-client.ts';
import { c2CliStart } from './c2-cli-start.ts';
import { e1Events } from './e1-events.ts';
import { n1 } from './n1-noisy-neighbour.ts';

export type { BenchCase, BenchContext, Target } from './types.ts';

export const CASES: BenchCase[] = [
  s1,
  p1Floor,
  p1Parse,
  p2Floor,
  p2Parse,
  p3,
  p4Token,
  p4Introspect,
  p5Login,
  p6,
  p7,
  p8Drain,
  p8Cron,
  p9,
  p9Fleet,
  f1Move,
  p10,
  p10Server,
  e1Events,
  n1,
  c1Client,
  c2CliStart,
];
