// The plan's requests per minute hold across front doors: each counts in memory and tells the others what it
// counted once a second, so two processes together allow about the limit, not twice it.
import crypto from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { configureBroadcasts } from '../../../platform/broadcast.ts';
import { createLogger } from '../../../platform/logger.ts';
import type { Principal } from '../../../platform/auth.ts';
import { startRequestQuota, type RequestQuota } from '../../../router/request-quota.ts';
import { createTestDatabase } from '../../support/database.ts';
import { waitFor } from '../../support/wait-for.ts';
import { heldPlan } from '../../support/plan-reader.ts';

configureBroadcasts('test-internal-secret-0123456789abcdefghij');

const LIMIT = 10;
const limits = heldPlan({ maxRequestsPerMinute: LIMIT, maxFunctionInvocationsPerMonth: 1000 }).reader;
const asProject = (projectId: string): Principal => ({ kind: 'project', projectId, tenantId: 't' });

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let a: RequestQuota;
let b: RequestQuota;

beforeAll(async () => {
  db = await createTestDatabase();
  const logger = createLogger('silent');
  a = await startRequestQuota({ limits, broadcastUrl: db.url, logger });
  b = await startRequestQuota({ limits, broadcastUrl: db.url, logger });
});

afterAll(async () => {
  await a?.stop();
  await b?.stop();
  await db?.drop();
});

/** Whether one more request of the project is refused by `q` (counting it when it is not). */
const refused = (q: RequestQuota, projectId: string): boolean => {
  try {
    q.hit(asProject(projectId));
    return false;
  } catch (err) {
    return (err as { code?: string }).code === 'RATE_LIMITED';
  }
};

/** Waits, if needed, for a minute with time to spare, so that the window does not turn during a test. */
const earlyInAMinute = () =>
  waitFor(() => new Date().getSeconds() <= 45, {
    timeoutMs: 16_000,
    intervalMs: 250,
    message: 'a minute with time to spare',
  });

describe('the request quota across processes', () => {
  it("refuses one process's requests once another process spent the project's minute", async () => {
    await earlyInAMinute();
    const projectId = '11111111-1111-4111-8111-111111111111';
    for (let i = 0; i < LIMIT; i++) expect(refused(a, projectId)).toBe(false);
    expect(refused(a, projectId)).toBe(true);
    // The other process hears of it within about a second, and then refuses the project's very first request.
    await waitFor(() => b.used(projectId) >= LIMIT, {
      timeoutMs: 10_000,
      intervalMs: 100,
      message: 'the other process to hear of the spent minute',
    });
    expect(refused(b, projectId)).toBe(true);
    // Another project is not affected, and a principal without a project is never counted.
    expect(refused(b, '22222222-2222-4222-8222-222222222222')).toBe(false);
    expect(() => b.hit({ kind: 'tenant', tenantId: 't', sessionId: 's' })).not.toThrow();
  });

  it('says what the next request would be refused with, without counting it', async () => {
    await earlyInAMinute();
    const projectId = crypto.randomUUID();
    expect(a.refusal(projectId)).toBeUndefined();
    for (let i = 0; i < LIMIT; i++) {
      expect(a.refusal(projectId)).toBeUndefined();
      expect(refused(a, projectId)).toBe(false);
    }
    expect(a.used(projectId)).toBe(LIMIT);
    expect(a.refusal(projectId)).toMatchObject({ code: 'RATE_LIMITED' });
    expect(a.used(projectId)).toBe(LIMIT);
    // A plan this process has not read yet: nothing is known, nothing is refused early (the full check decides).
    const logger = createLogger('silent');
    const unread = await startRequestQuota({
      limits: { ...heldPlan({ maxRequestsPerMinute: 0 }).reader, peekPlan: () => undefined },
      logger,
    });
    // A suspended project is refused early too, with what the full check says.
    const suspended = await startRequestQuota({ limits: heldPlan({}, 'tenant').reader, logger });
    try {
      expect(unread.refusal(projectId)).toBeUndefined();
      expect(suspended.refusal(projectId)).toMatchObject({ code: 'PROJECT_SUSPENDED' });
    } finally {
      await unread.stop();
      await suspended.stop();
    }
  });

  it('tells the other process the counts of 300 projects counted in one second (more than one NOTIFY holds)', async () => {
    await earlyInAMinute();
    // 1 to 3 requests each, so that each project's own count is checked, not only that some message arrived.
    const counted = Array.from({ length: 300 }, (_, i): [string, number] => [crypto.randomUUID(), (i % 3) + 1]);
    for (const [projectId, n] of counted) for (let i = 0; i < n; i++) expect(refused(a, projectId)).toBe(false);
    const missing = () => counted.filter(([projectId, n]) => b.used(projectId) !== n).length;
    await waitFor(() => missing() === 0, {
      timeoutMs: 10_000,
      intervalMs: 100,
      message: "the other process to hear every project's count",
    }).catch((err: Error) => {
      throw new Error(`${err.message}; ${missing()} of 300 projects not heard`);
    });
  });
});
