// The edge-functions side of the dashboard in a real browser (Debian's chromium, headless, driven by playwright-core)
// against a live Tessera: database hooks on a table chosen from the project's tables, function secrets, outbound
// event subscriptions with their delivery log, replaying an execution from a step and the diff with its replay, the
// dry run as a timeline; and the defects of issue 26 (per-function charts that repeat names and clip bars, a run that
// answered 400 listed as succeeded, e-mail template fields pre-filled so typing appends). Each page is saved as a
// screenshot (tests/artifacts/dashboard) and scanned with axe-core: no serious or critical violation.
import { afterAll, beforeAll, describe, expect, it, jest } from '@jest/globals';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import {
  contains,
  count,
  gone,
  openConsole,
  pageChecks,
  shown,
  signUpWithProject,
  until,
} from '../../support/browser-page.ts';
import type { TestPlatform } from '../../support/platform.ts';
import { waitFor } from '../../support/wait-for.ts';
import type { Res } from '../../support/http.ts';
import { Webhook } from 'standardwebhooks';
import { startReceiver, type Receiver } from '../functions/event-receiver.ts';

jest.setTimeout(60_000);

let platform: TestPlatform;
let base: string;
let browser: Browser;
let page: Page;
let receiver: Receiver;
let projectId = '';
let apiKey = '';
const consoleErrors: string[] = [];
const tenant = { email: `fn-${Date.now()}@example.com`, password: 'a long enough password 1', name: 'Fn Board' };

/** A call to the API with the project's secret key (set-up and checks outside the browser). */
async function api(method: string, url: string, body?: unknown): Promise<Pick<Res, 'status' | 'body'>> {
  const res = await fetch(`${platform.url}${url}`, {
    method,
    headers: { 'x-api-key': apiKey, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const { main, checkPage } = pageChecks(() => page);

/** Opens a page of the project's console. */
const open = async (address: string) => await page.goto(`${base}/dashboard/p/${projectId}${address}`);

// What the page draws on canvases, per canvas since it was last cleared (the charts' axis labels).
const recordCanvasTexts = async (context: BrowserContext) =>
  await context.addInitScript(() => {
    const drawn = new Map<HTMLCanvasElement, string[]>();
    (window as unknown as { __canvasTexts: typeof drawn }).__canvasTexts = drawn;
    const proto = CanvasRenderingContext2D.prototype;
    const fillText = proto.fillText;
    const clearRect = proto.clearRect;
    proto.fillText = function (this: CanvasRenderingContext2D, text: string, ...rest: [number, number]) {
      drawn.set(this.canvas, [...(drawn.get(this.canvas) ?? []), String(text)]);
      return fillText.call(this, text, ...rest);
    };
    proto.clearRect = function (this: CanvasRenderingContext2D, ...args: [number, number, number, number]) {
      drawn.set(this.canvas, []);
      return clearRect.apply(this, args);
    };
  });

beforeAll(async () => {
  // Event deliveries go to a receiver on loopback, which outbound HTTP refuses unless the operator allows it.
  // Automatic retries of a failed delivery wait long enough not to race the redelivery the test asks for.
  ({ platform, base, browser, page } = await openConsole(
    { TESSERA_FUNCTIONS_ALLOW_PRIVATE_NETWORKS: 'true', TESSERA_EVENT_RETRY_BASE_MS: '600000' },
    consoleErrors,
    { clipboard: true, prepare: recordCanvasTexts },
  ));
  receiver = await startReceiver();

  // A tenant signs up and creates a project in the console.
  ({ projectId, apiKey } = await signUpWithProject(page, base, platform.url, tenant, 'Shop'));

  // Tables and functions made through the API.
  await waitFor(async () => (await api('POST', '/v1/rawSQL', { sql: 'select 1 as one' })).status === 200, {
    message: 'the project database',
  });
  for (const sql of [
    'create table orders (id serial primary key, sku text)',
    'create table audit (id serial primary key, note text)',
  ])
    expect((await api('POST', '/v1/rawSQL', { sql })).status).toBe(200);
  const functions: Record<string, unknown[]> = {
    hello: [{ name: 'greet', kind: 'Transform', expression: { message: 'Hello, {{ input.body.name }}!' } }],
    audit: [
      { name: 'write', kind: 'Database', query: { action: 'insert', table: 'audit', values: { note: 'hooked' } } },
    ],
    reject: [
      {
        name: 'refuse',
        kind: 'Transform',
        return: true,
        expression: { error: 'BAD_INPUT', status: 400, message: 'name is required' },
      },
    ],
    pipeline: [
      { name: 'double', kind: 'Transform', expression: { n: '{{ input.body.n * 2 }}' } },
      {
        name: 'label',
        kind: 'Transform',
        expression: { label: 'n is {{ input.body.n }}', doubled: '{{ steps.double.body.n }}' },
      },
    ],
  };
  for (const [name, steps] of Object.entries(functions))
    expect((await api('POST', '/edge/api/v1/functions', { name, steps })).status).toBe(201);
}, 180_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await platform?.close();
});

describe('database hooks in the console', () => {
  it('offers the project tables in a select (no free text), and creates a hook on the one chosen', async () => {
    await open('/functions/hooks');
    await shown(main().getByText('No hooks'));
    expect(await main().getByRole('textbox', { name: 'Table' }).count()).toBe(0);
    const table = main().getByRole('combobox', { name: 'Table' });
    await until(
      () => table.locator('option').allInnerTexts(),
      (o) => o.includes('orders') && o.includes('audit'),
      'the project tables in the select',
    );
    await table.selectOption('orders');
    await main().getByRole('combobox', { name: 'Timing' }).selectOption('after');
    await main().getByRole('combobox', { name: 'Function' }).selectOption('audit');
    await page.getByRole('button', { name: 'Create hook' }).click();
    await contains(main().getByRole('table'), 'orders');
    await checkPage('fn-01-hooks');
    const hooks = await api('GET', '/edge/api/v1/hooks');
    expect(hooks.body.hooks).toEqual([
      expect.objectContaining({ table: 'orders', timing: 'after', function: 'audit' }),
    ]);
  });
});

describe('function secrets in the console', () => {
  it('creates a secret whose value is never shown again, rotates it and deletes it after asking', async () => {
    await open('/functions/secrets');
    await shown(main().getByText('No secrets'));
    await page.getByLabel('Secret name').fill('STRIPE_KEY');
    await page.getByLabel('Value', { exact: true }).fill('sk_live_first_value');
    await page.getByRole('button', { name: 'Save secret' }).click();
    const table = main().getByRole('table');
    await contains(table, 'STRIPE_KEY');
    // The value is nowhere on the page, and the fields are empty again.
    expect(await page.content()).not.toContain('sk_live_first_value');
    expect(await page.getByLabel('Value', { exact: true }).inputValue()).toBe('');
    // A function reads it (its output shows secrets redacted, so the function compares).
    expect(
      (
        await api('POST', '/edge/api/v1/functions', {
          name: 'check-secret',
          steps: [
            { name: 's', kind: 'Transform', expression: { same: '{{ safeEqual(secrets.STRIPE_KEY, input.body.v) }}' } },
          ],
        })
      ).status,
    ).toBe(201);
    const check = async (v: string) => (await api('POST', '/edge/api/v1/invoke/check-secret', { v })).body;
    expect(await check('sk_live_first_value')).toEqual({ same: true });
    // The same name again is pointed at rotating instead.
    await page.getByLabel('Secret name').fill('STRIPE_KEY');
    await contains(main(), 'A secret of this name exists');
    await page.getByLabel('Secret name').fill('');
    await checkPage('fn-02-secrets');
    await page.getByRole('button', { name: 'Rotate STRIPE_KEY' }).click();
    await page.getByLabel('New value of STRIPE_KEY').fill('sk_live_second_value');
    await page.getByRole('button', { name: 'Save new value' }).click();
    await contains(page.locator('.toasts'), 'STRIPE_KEY rotated');
    expect(await page.content()).not.toContain('sk_live_second_value');
    expect([await check('sk_live_first_value'), await check('sk_live_second_value')]).toEqual([
      { same: false },
      { same: true },
    ]);
    await page.getByRole('button', { name: 'Delete secret STRIPE_KEY' }).click();
    const dialog = page.getByRole('dialog');
    await contains(dialog, 'Delete secret STRIPE_KEY?');
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await gone(dialog);
    await contains(table, 'STRIPE_KEY');
    await page.getByRole('button', { name: 'Delete secret STRIPE_KEY' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Delete', exact: true }).click();
    await shown(main().getByText('No secrets'));
    expect((await api('GET', '/edge/api/v1/secrets')).body.secrets).toEqual([]);
  });
});

describe('outbound event subscriptions in the console', () => {
  let secret = '';
  const hook = () => `${receiver.url}/hook`;
  const deliveries = () => main().getByRole('table', { name: 'Deliveries' }).locator('tbody tr:not(.detail-row)');

  it('creates a subscription to row events of a chosen table, showing its signing secret once', async () => {
    await open('/functions/events');
    await shown(main().getByText('No event subscriptions'));
    await page.getByLabel('Endpoint URL').fill(hook());
    await page.getByLabel('Description').fill('Orders to the warehouse');
    await main().getByRole('checkbox', { name: 'row.inserted' }).check();
    await main()
      .getByRole('group', { name: 'Tables whose rows are watched' })
      .getByRole('checkbox', { name: 'orders' })
      .check();
    await page.getByRole('button', { name: 'Create subscription' }).click();
    const value = main().getByTestId('value-Signing secret');
    await shown(value);
    secret = (await value.innerText()).trim();
    expect(secret).toMatch(/^whsec_/);
    await checkPage('fn-03-events');
    await page.getByRole('button', { name: 'Done, I have copied it' }).click();
    await gone(value);
    expect(await page.content()).not.toContain(secret);
    const listed = await api('GET', '/edge/api/v1/event-subscriptions');
    expect(listed.body.event_subscriptions).toEqual([
      expect.objectContaining({
        url: hook(),
        events: ['row.inserted'],
        tables: ['orders'],
        enabled: true,
        secret: null,
      }),
    ]);
    // A row written to the table is delivered, signed with that secret.
    expect((await api('POST', '/v1/insert', { table: 'orders', values: { sku: 'A-1' } })).status).toBe(201);
    const [got] = await receiver.waitFor('/hook', 1);
    const event = new Webhook(secret).verify(got!.body, got!.headers) as { type: string; data: unknown };
    expect(event.type).toBe('row.inserted');
  });

  it('sends a test, shows each delivery with its status and response, and redelivers a failed one', async () => {
    await page.getByRole('button', { name: 'Send test' }).click();
    await contains(page.locator('.toasts'), 'Test event queued');
    await receiver.waitFor('/hook', 2);
    await page.getByRole('link', { name: `Delivery log of ${hook()}` }).click();
    await shown(main().getByRole('heading', { name: `Deliveries to ${hook()}` }));
    await count(deliveries(), 2);
    const test = deliveries().filter({ hasText: 'subscription.test' });
    await contains(test, 'succeeded');
    await contains(test, '200');
    await test.getByRole('button', { name: /^Show/ }).click();
    await contains(main().getByTestId('delivery-detail'), '{"ok":true}');
    await checkPage('fn-04-deliveries');
    await test.getByRole('button', { name: /^Hide/ }).click();
    // The endpoint fails: the delivery shows the 500 and what it answered; once it is back, a redelivery succeeds.
    receiver.answer('/hook', { status: 500, body: '{"error":"warehouse down"}' });
    await main().getByRole('button', { name: 'Send test' }).click();
    await count(deliveries(), 3);
    const failed = deliveries().first();
    await contains(failed, '500');
    await contains(failed, 'pending');
    await failed.getByRole('button', { name: /^Show/ }).click();
    await contains(main().getByTestId('delivery-detail'), 'warehouse down');
    receiver.answer('/hook', { status: 200, body: '{"ok":"again"}' });
    await failed.getByRole('button', { name: /^Redeliver/ }).click();
    await contains(failed, 'succeeded');
    await contains(failed, '200');
    await contains(main().getByTestId('delivery-detail'), '{"ok":"again"}');
    // Filtering by status.
    await main().getByRole('combobox', { name: 'Status' }).selectOption('succeeded');
    await count(deliveries(), 3);
    await main().getByRole('combobox', { name: 'Status' }).selectOption('dead');
    await shown(main().getByText('No deliveries'));
  });

  it('rotates the secret after asking (shown once), and disables and enables the subscription', async () => {
    await page.getByRole('link', { name: '← Event subscriptions' }).click();
    await page.getByRole('button', { name: `Rotate secret of ${hook()}` }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate secret' }).click();
    const value = main().getByTestId('value-Signing secret');
    await shown(value);
    const rotated = (await value.innerText()).trim();
    expect(rotated).toMatch(/^whsec_/);
    expect(rotated).not.toBe(secret);
    await page.getByRole('button', { name: 'Done, I have copied it' }).click();
    await gone(value);
    await page.getByRole('button', { name: 'Disable', exact: true }).click();
    await shown(main().locator('.badge', { hasText: 'disabled' }));
    expect((await api('GET', '/edge/api/v1/event-subscriptions')).body.event_subscriptions[0].enabled).toBe(false);
    await page.getByRole('button', { name: 'Enable', exact: true }).click();
    await shown(main().locator('.badge', { hasText: 'enabled' }));
    expect((await api('GET', '/edge/api/v1/event-subscriptions')).body.event_subscriptions[0].enabled).toBe(true);
    // The next delivery is signed with the new secret.
    const before = receiver.at('/hook').length;
    await page.getByRole('button', { name: 'Send test' }).click();
    const all = await receiver.waitFor('/hook', before + 1);
    expect(() => new Webhook(rotated).verify(all[before]!.body, all[before]!.headers)).not.toThrow();
  });
});

describe('executions in the console: dry run timeline, replay from a step, diff', () => {
  it('shows a dry run as the timeline of its steps, not as raw JSON', async () => {
    const fns = (await api('GET', '/edge/api/v1/functions?first=100')).body.functions as { id: string; name: string }[];
    await open(`/functions/f/${fns.find((f) => f.name === 'pipeline')!.id}`);
    await page.getByLabel('Input (JSON').fill('{"n": 3}');
    await main().getByRole('combobox', { name: 'Mode' }).selectOption('dry');
    await page.getByRole('button', { name: 'Run pipeline' }).click();
    const steps = main().getByRole('list', { name: 'Steps of the dry run' });
    await contains(steps.locator('> li').first(), 'double');
    await contains(steps.locator('> li').last(), 'label');
    await contains(steps, 'n is 3');
    await contains(main().getByTestId('dry-run'), 'nothing was sent, written or recorded');
    expect(await main().getByTestId('dry-run').innerText()).not.toContain('"trace"');
    await checkPage('fn-05-dry-run');
  });

  it('replays an execution from a step with a changed input and shows the diff with its replay', async () => {
    const res = await fetch(`${platform.url}/edge/api/v1/invoke/pipeline`, {
      method: 'POST',
      headers: { 'x-api-key': apiKey, 'content-type': 'application/json' },
      body: JSON.stringify({ n: 1 }),
    });
    expect(res.status).toBe(200);
    const id = res.headers.get('x-execution-id')!;
    await open(`/functions/executions/${id}`);
    await contains(main().getByRole('list', { name: 'Steps' }), 'label');
    await checkPage('fn-06-execution');
    await main().getByRole('combobox', { name: 'From step' }).selectOption('label');
    await page.getByLabel('Change the input').check();
    await page.getByLabel('Input to replay with').fill('{"n": 5}');
    await page.getByRole('button', { name: 'Replay', exact: true }).click();
    await page.waitForURL(new RegExp(`/functions/executions/${id}/diff/[0-9a-f-]+$`));
    const replayId = /\/diff\/([0-9a-f-]+)$/.exec(page.url())![1]!;
    const replay = (await api('GET', `/edge/api/v1/executions/${replayId}`)).body.execution;
    expect(replay).toMatchObject({ replay_of: id, replay_from_step: 'label', status: 'succeeded' });
    await shown(main().getByRole('heading', { name: 'Compare executions' }));
    const runs = main().getByRole('table', { name: 'The runs compared' });
    const output = runs.locator('tr', { has: page.getByRole('rowheader', { name: 'Output' }) });
    await contains(output, 'changed');
    expect(await output.locator('mark').allInnerTexts()).toEqual([
      expect.stringContaining('"n is 1"'),
      expect.stringContaining('"n is 5"'),
    ]);
    const label = main().getByRole('table', { name: 'Step label compared' });
    const labelOutput = label.locator('tr', { has: page.getByRole('rowheader', { name: 'Output' }) });
    await contains(labelOutput, 'changed');
    expect((await labelOutput.locator('mark').allInnerTexts()).join(' ')).toContain('n is 5');
    // The step before it was not run again: its output is the one recorded.
    const double = main().getByRole('table', { name: 'Step double compared' });
    const doubleOutput = double.locator('tr', { has: page.getByRole('rowheader', { name: 'Output' }) });
    await contains(doubleOutput, 'same');
    await checkPage('fn-07-diff');
    // From the replay, the comparison with its original is one link away.
    await main().getByRole('link', { name: replayId }).click();
    await page.getByRole('link', { name: 'Compare with the execution it replays' }).click();
    await page.waitForURL(new RegExp(`/diff/${replayId}$`));
  });
});

describe('defects of issue 26, each seen failing before its fix', () => {
  it('lists a run that answered 400 with that status, not as succeeded', async () => {
    const run = await api('POST', '/edge/api/v1/invoke/reject', { name: '' });
    expect(run.status).toBe(400);
    await open('/functions/executions?function=reject');
    const row = main().getByRole('table').locator('tbody tr').filter({ hasText: 'reject' }).first();
    await contains(row, '400');
    expect(await row.innerText()).not.toMatch(/succeeded/);
    await row.getByRole('link').first().click();
    await shown(main().getByRole('heading', { name: 'Execution of reject' }));
    const header = main().locator('section').first();
    await contains(header, '400');
    expect(await header.locator('.card-head .badge').first().innerText()).not.toMatch(/succeeded/);
  });

  it('opens a new e-mail template with empty fields and placeholders, so what is typed is all there is', async () => {
    await open('/functions/email');
    await page.getByRole('button', { name: 'New template' }).click();
    for (const label of ['Subject', 'HTML body', 'Text body', 'Template name']) {
      const field = main().getByLabel(label, { exact: true });
      expect({ label, value: await field.inputValue() }).toEqual({ label, value: '' });
      expect((await field.getAttribute('placeholder')) ?? '').not.toBe('');
    }
    const subject = main().getByLabel('Subject', { exact: true });
    await subject.click();
    await subject.pressSequentially('Welcome aboard');
    expect(await subject.inputValue()).toBe('Welcome aboard');
  });

  it('draws the per-function charts with one label per function and no clipped bar', async () => {
    for (const [name, body] of [
      ['hello', { name: 'a' }],
      ['hello', { name: 'b' }],
      ['pipeline', { n: 1 }],
    ] as const)
      expect((await api('POST', `/edge/api/v1/invoke/${name}`, body)).status).toBe(200);
    // Every function that ran in the window (the earlier tests ran some too), at least three.
    const names = ((await api('GET', '/edge/api/v1/stats')).body.functions as { function: string }[])
      .map((f) => f.function)
      .sort();
    expect(names).toEqual(expect.arrayContaining(['hello', 'pipeline', 'reject']));
    await open('/functions/stats');
    for (const caption of ['Runs by outcome, per function', 'Duration p50 and p95, per function']) {
      const figure = main()
        .locator('figure')
        .filter({ has: page.locator('figcaption', { hasText: caption }) });
      await shown(figure);
      // The labels the chart shows: text in its SVG and text drawn on its canvases.
      const labels = await until(
        () =>
          figure.evaluate((f) => {
            const drawn = (window as unknown as { __canvasTexts: Map<HTMLCanvasElement, string[]> }).__canvasTexts;
            const canvas = [...f.querySelectorAll('canvas')].flatMap((c) => drawn.get(c) ?? []);
            const svg = [...f.querySelectorAll('svg text')].map((t) => t.textContent ?? '');
            return [...canvas, ...svg];
          }),
        (l) => names.every((n) => l.includes(n)),
        `the function names on ${caption}`,
      );
      expect({ caption, labels: labels.filter((l) => names.includes(l)).sort() }).toEqual({ caption, labels: names });
      // Every bar lies whole inside the drawing.
      const bars = await figure.evaluate((f) => {
        const svg = f.querySelector('svg');
        if (!svg) return { inside: false, bars: 0 };
        const box = svg.getBoundingClientRect();
        const rects = [...svg.querySelectorAll('rect.bar')].map((r) => r.getBoundingClientRect());
        const inside = rects.every(
          (r) =>
            r.left >= box.left - 0.5 &&
            r.right <= box.right + 0.5 &&
            r.top >= box.top - 0.5 &&
            r.bottom <= box.bottom + 0.5,
        );
        return { inside, bars: rects.length };
      });
      expect({ caption, ...bars }).toEqual({ caption, inside: true, bars: names.length * 2 });
    }
    await checkPage('fn-09-stats');
  });
});
