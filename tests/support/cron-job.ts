// A cron job that runs a do-nothing function, for the tests of the scheduler across instances (cron failover,
// multi-instance): what runs does not matter, only when and how often.
import { expect } from '@jest/globals';
import type { Res } from './http.ts';

type Call = (method: string, path: string, opts?: { apiKey?: string; body?: unknown }) => Promise<Res>;

/**
 * Creates the function `tick` (one Transform step) in the project of `apiKey` and the cron job `job` running it;
 * answers the job's id.
 */
export async function tickingCronJob(
  call: Call,
  apiKey: string,
  job: { name: string; schedule: string; timezone?: string },
): Promise<string> {
  const fn = await call('POST', '/edge/api/v1/functions', {
    apiKey,
    body: { name: 'tick', steps: [{ name: 'out', kind: 'Transform', expression: { ok: true } }] },
  });
  expect(fn.status).toBe(201);
  const created = await call('POST', '/edge/api/v1/cron', { apiKey, body: { ...job, function: 'tick' } });
  expect(created.status).toBe(201);
  return created.body.cron_job.id as string;
}
