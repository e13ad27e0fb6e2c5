// The signature helpers against the senders' own test vectors and libraries: GitHub's documented example, the
// Standard Webhooks reference vector and its npm library, Stripe's own test header generator, and Shopify's
// documented algorithm (base64 of the HMAC-SHA256 digest over the raw body; vectors computed with openssl).
import { describe, expect, it } from '@jest/globals';
import { Webhook } from 'standardwebhooks';
import Stripe from 'stripe';
import { compileTemplate, templateScope } from './templates.ts';
import {
  hmac,
  signStandardWebhook,
  timestampWithin,
  verifyStandardWebhook,
  verifyStripeSignature,
} from './signatures.ts';

const GITHUB_SECRET = "It's a Secret to Everybody";
const GITHUB_PAYLOAD = 'Hello, World!';
const GITHUB_SIGNATURE = 'sha256=757107ea0eb2509fc211221cce984b8a37570b6d7586c22c46f4379c8b043e17';

// The Standard Webhooks reference vector (the same in the reference libraries' tests).
const SW_SECRET = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';
const SW_ID = 'msg_p5jXN8AQM9LWM0D4loKWxJek';
const SW_TIMESTAMP = 1614265330;
const SW_BODY = '{"test": 2432232314}';
const SW_SIGNATURE = 'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=';

/** Evaluates one template expression over an input, as a function step would. */
function evaluate(expression: string, input: Record<string, unknown>, secrets: Record<string, string>): unknown {
  return compileTemplate(`{{ ${expression} }}`).render(templateScope({ input, steps: {}, secrets, env: {} }));
}

describe('HMAC helpers', () => {
  it("match GitHub's documented X-Hub-Signature-256 example", () => {
    expect(`sha256=${hmac('sha256', GITHUB_SECRET, GITHUB_PAYLOAD)}`).toBe(GITHUB_SIGNATURE);
    const input = { rawBody: GITHUB_PAYLOAD, headers: { 'x-hub-signature-256': GITHUB_SIGNATURE } };
    expect(
      evaluate(
        `safeEqual('sha256=' + hmacSha256(secrets.GH, input.rawBody), input.headers['X-Hub-Signature-256'])`,
        input,
        { GH: GITHUB_SECRET },
      ),
    ).toBe(true);
    expect(
      evaluate(
        `safeEqual('sha256=' + hmacSha256(secrets.GH, input.rawBody + ' '), input.headers['X-Hub-Signature-256'])`,
        input,
        { GH: GITHUB_SECRET },
      ),
    ).toBe(false);
  });

  it('answer SHA-1 and SHA-512 in hex or as base64 of the digest bytes (vectors from openssl dgst -hmac)', () => {
    expect(hmac('sha1', GITHUB_SECRET, GITHUB_PAYLOAD)).toBe('01dc10d0c83e72ed246219cdd91669667fe2ca59');
    expect(hmac('sha512', GITHUB_SECRET, GITHUB_PAYLOAD)).toBe(
      '11ed355a617e98134e842012a7944ccf59c10256cb182357bd7e3a42013ff07c376f8c14cf5cc1923da20b51d64256b2fb8ebbf100aa67a61326f61fea8111bc',
    );
    expect(hmac('sha512', GITHUB_SECRET, GITHUB_PAYLOAD, 'base64')).toBe(
      'Ee01WmF+mBNOhCASp5RMz1nBAlbLGCNXvX46QgE/8Hw3b4wUz1zBkj2iC1HWQlay+4678QCqZ6YTJvYf6oERvA==',
    );
    expect(evaluate(`hmacSha1(secrets.K, input.rawBody)`, { rawBody: GITHUB_PAYLOAD }, { K: GITHUB_SECRET })).toBe(
      '01dc10d0c83e72ed246219cdd91669667fe2ca59',
    );
    expect(
      evaluate(`hmacSha512(secrets.K, input.rawBody, 'hex')`, { rawBody: GITHUB_PAYLOAD }, { K: GITHUB_SECRET }),
    ).toMatch(/^11ed355a/);
  });

  it('verify a Shopify X-Shopify-Hmac-Sha256 header: base64 of the HMAC-SHA256 digest over the raw body', () => {
    const body = '{"id":820982911946154508,"email":"jon@doe.ca","topic":"orders/create"}';
    const header = 'PEyDufoy/9N1yHLdCzWUfYlPHsOsLZowG59JquDg5qE=';
    const input = { rawBody: body, headers: { 'x-shopify-hmac-sha256': header } };
    expect(
      evaluate(
        `safeEqual(hmacSha256(secrets.SHOPIFY, input.rawBody, 'base64'), input.headers['X-Shopify-Hmac-Sha256'])`,
        input,
        { SHOPIFY: 'shpss_test_secret' },
      ),
    ).toBe(true);
    // base64() encodes the hex text, not the digest: the mistake the encoding argument avoids.
    expect(
      evaluate(
        `safeEqual(base64(hmacSha256(secrets.SHOPIFY, input.rawBody)), input.headers['X-Shopify-Hmac-Sha256'])`,
        input,
        { SHOPIFY: 'shpss_test_secret' },
      ),
    ).toBe(false);
  });

  it('refuse an unknown encoding (the step fails with the reason)', () => {
    expect(() => hmac('sha256', 'k', 'd', 'latin1')).toThrow(/hex.*base64/);
  });
});

describe('Standard Webhooks', () => {
  const headers = (id: string, ts: number, sig: string) => ({
    'webhook-id': id,
    'webhook-timestamp': String(ts),
    'webhook-signature': sig,
  });

  it('signs the reference vector exactly', () => {
    expect(signStandardWebhook(SW_SECRET, SW_ID, SW_TIMESTAMP, SW_BODY)).toBe(SW_SIGNATURE);
  });

  it('verifies the reference vector at its time, and with svix- headers, several signatures or no whsec_ prefix', () => {
    const at = SW_TIMESTAMP * 1000;
    expect(verifyStandardWebhook(SW_SECRET, headers(SW_ID, SW_TIMESTAMP, SW_SIGNATURE), SW_BODY, 300, at)).toBe(true);
    expect(
      verifyStandardWebhook(
        SW_SECRET,
        { 'svix-id': SW_ID, 'svix-timestamp': String(SW_TIMESTAMP), 'svix-signature': SW_SIGNATURE },
        SW_BODY,
        300,
        at,
      ),
    ).toBe(true);
    expect(
      verifyStandardWebhook(SW_SECRET, headers(SW_ID, SW_TIMESTAMP, `v1,bm9wZQ== ${SW_SIGNATURE}`), SW_BODY, 300, at),
    ).toBe(true);
    expect(
      verifyStandardWebhook(SW_SECRET.slice(6), headers(SW_ID, SW_TIMESTAMP, SW_SIGNATURE), SW_BODY, 300, at),
    ).toBe(true);
  });

  it('refuses a changed body, id, secret, version, an old or future timestamp, and missing headers', () => {
    const at = SW_TIMESTAMP * 1000;
    const ok = headers(SW_ID, SW_TIMESTAMP, SW_SIGNATURE);
    expect(verifyStandardWebhook(SW_SECRET, ok, '{"test": 2432232315}', 300, at)).toBe(false);
    expect(verifyStandardWebhook(SW_SECRET, { ...ok, 'webhook-id': 'msg_other' }, SW_BODY, 300, at)).toBe(false);
    expect(
      verifyStandardWebhook(
        'whsec_' + Buffer.from('another key of enough length!').toString('base64'),
        ok,
        SW_BODY,
        300,
        at,
      ),
    ).toBe(false);
    expect(
      verifyStandardWebhook(
        SW_SECRET,
        { ...ok, 'webhook-signature': SW_SIGNATURE.replace('v1,', 'v2,') },
        SW_BODY,
        300,
        at,
      ),
    ).toBe(false);
    expect(verifyStandardWebhook(SW_SECRET, ok, SW_BODY, 300, at + 301_000)).toBe(false);
    expect(verifyStandardWebhook(SW_SECRET, ok, SW_BODY, 300, at - 301_000)).toBe(false);
    expect(verifyStandardWebhook(SW_SECRET, ok, SW_BODY, 3600, at + 301_000)).toBe(true);
    expect(verifyStandardWebhook(SW_SECRET, { 'webhook-id': SW_ID }, SW_BODY, 300, at)).toBe(false);
    expect(verifyStandardWebhook(null, ok, SW_BODY, 300, at)).toBe(false);
  });

  it('agrees with the standardwebhooks library both ways', () => {
    const secret = 'whsec_' + Buffer.from('0123456789abcdef0123456789abcdef').toString('base64');
    const wh = new Webhook(secret);
    const now = new Date();
    const body = JSON.stringify({ type: 'row.inserted', data: { row: { id: 1, name: 'ü €' } } });
    // Theirs signs, ours verifies (as a template, the way a function checks an inbound webhook).
    const theirs = wh.sign('msg_1', now, body);
    const input = { rawBody: body, headers: headers('msg_1', Math.floor(now.getTime() / 1000), theirs) };
    expect(evaluate('verifyStandardWebhook(secrets.SW, input.headers, input.rawBody)', input, { SW: secret })).toBe(
      true,
    );
    expect(
      evaluate('verifyStandardWebhook(secrets.SW, input.headers, input.rawBody + "x")', input, { SW: secret }),
    ).toBe(false);
    // Ours signs, theirs verifies.
    const ts = Math.floor(Date.now() / 1000);
    const ours = signStandardWebhook(secret, 'msg_2', ts, body);
    expect(wh.verify(body, headers('msg_2', ts, ours))).toEqual(JSON.parse(body));
  });
});

describe('Stripe-style timestamped signatures', () => {
  const stripe = new Stripe('sk_test_unused');
  const secret = 'whsec_test_secret_for_tessera';
  const payload = JSON.stringify({ id: 'evt_1', object: 'event', type: 'payment_intent.succeeded' }, null, 2);

  it("verifies the header made by the stripe package's own test header generator", () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    expect(verifyStripeSignature(secret, header, payload)).toBe(true);
    const input = { rawBody: payload, headers: { 'stripe-signature': header } };
    expect(
      evaluate(`verifyStripeSignature(secrets.STRIPE, input.headers['Stripe-Signature'], input.rawBody, 300)`, input, {
        STRIPE: secret,
      }),
    ).toBe(true);
    // And the library accepts what it made (the same check, independently).
    expect(stripe.webhooks.constructEvent(payload, header, secret).id).toBe('evt_1');
  });

  it('refuses a wrong secret, a changed body, an old timestamp and a header without v1', () => {
    const header = stripe.webhooks.generateTestHeaderString({ payload, secret });
    expect(verifyStripeSignature('whsec_other', header, payload)).toBe(false);
    expect(verifyStripeSignature(secret, header, payload + ' ')).toBe(false);
    const old = Math.floor(Date.now() / 1000) - 600;
    const oldHeader = stripe.webhooks.generateTestHeaderString({ payload, secret, timestamp: old });
    expect(verifyStripeSignature(secret, oldHeader, payload)).toBe(false);
    expect(verifyStripeSignature(secret, oldHeader, payload, 900)).toBe(true);
    expect(verifyStripeSignature(secret, header.replace(/v1=/g, 'v0='), payload)).toBe(false);
    expect(verifyStripeSignature(secret, 'garbage', payload)).toBe(false);
  });

  it('accepts any of several v1 signatures (a secret being rolled)', () => {
    const t = Math.floor(Date.now() / 1000);
    const good = hmac('sha256', secret, `${t}.${payload}`);
    expect(verifyStripeSignature(secret, `t=${t},v1=${'0'.repeat(64)},v1=${good}`, payload)).toBe(true);
  });
});

describe('timestampWithin', () => {
  it('takes Unix seconds (number or digits) and ISO times, either side of now', () => {
    const now = Date.parse('2026-03-01T12:00:00Z');
    expect(timestampWithin(now / 1000 - 299, 300, now)).toBe(true);
    expect(timestampWithin(String(now / 1000 + 299), 300, now)).toBe(true);
    expect(timestampWithin('2026-03-01T12:04:59Z', undefined, now)).toBe(true);
    expect(timestampWithin('2026-03-01T12:05:01Z', undefined, now)).toBe(false);
    expect(timestampWithin(now / 1000 - 3600, 60, now)).toBe(false);
    expect(timestampWithin('yesterday', 60, now)).toBe(false);
    expect(timestampWithin(now / 1000, -1, now)).toBe(false);
  });
});
