// Webhook signatures, both ways: the helpers a function's templates call to check what a sender signed
// (HMAC over the raw body in hex or base64, Standard Webhooks, Stripe-style timestamped headers, a timestamp
// tolerance) and the Standard Webhooks signing of Tessera's own outbound event deliveries (event-webhooks.ts).
// Every comparison of a signature is constant-time; the verifying helpers answer false, never throw, on bad input.
import crypto from 'node:crypto';
import { safeEqual } from '../../../platform/crypto.ts';

export type DigestEncoding = 'hex' | 'base64' | 'base64url';
const ENCODINGS: readonly string[] = ['hex', 'base64', 'base64url'];

/** Tolerance of the timestamped schemes when the caller gives none: 5 minutes, as Stripe and Standard Webhooks use. */
export const DEFAULT_TOLERANCE_SECONDS = 300;

function text(v: unknown): string {
  if (typeof v === 'string') return v;
  if (v === undefined || v === null) return '';
  return typeof v === 'object' ? JSON.stringify(v) : String(v);
}

function encodingOf(v: unknown): DigestEncoding {
  if (v === undefined || v === null || v === '') return 'hex';
  if (typeof v !== 'string' || !ENCODINGS.includes(v))
    throw new Error(`the encoding must be "hex", "base64" or "base64url", not ${JSON.stringify(v)}`);
  return v as DigestEncoding;
}

/** HMAC of `data` (its UTF-8 bytes) under `key` (its UTF-8 bytes), as hex (default), base64 or base64url of the digest's bytes. */
export function hmac(algorithm: 'sha1' | 'sha256' | 'sha512', key: unknown, data: unknown, encoding?: unknown): string {
  return crypto.createHmac(algorithm, text(key)).update(text(data)).digest(encodingOf(encoding));
}

/** Constant-time equality of two strings (false for anything else). */
export function constantTimeEqual(a: unknown, b: unknown): boolean {
  return typeof a === 'string' && typeof b === 'string' && safeEqual(a, b);
}

/** Seconds since the epoch of a timestamp given as Unix seconds (number or digits) or an ISO 8601 text; NaN otherwise. */
function secondsOf(ts: unknown): number {
  if (typeof ts === 'number') return Number.isFinite(ts) ? ts : Number.NaN;
  if (typeof ts !== 'string' || ts.trim() === '') return Number.NaN;
  if (/^\s*-?\d+(\.\d+)?\s*$/.test(ts)) return Number(ts);
  const ms = Date.parse(ts);
  return Number.isNaN(ms) ? Number.NaN : ms / 1000;
}

function toleranceOf(v: unknown): number {
  if (v === undefined || v === null) return DEFAULT_TOLERANCE_SECONDS;
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) && n >= 0 ? n : Number.NaN;
}

/** True when `ts` (Unix seconds or ISO 8601) lies within `toleranceSeconds` (default 300) of now, either side. */
export function timestampWithin(ts: unknown, toleranceSeconds?: unknown, nowMs = Date.now()): boolean {
  const t = secondsOf(ts);
  const tolerance = toleranceOf(toleranceSeconds);
  return Number.isFinite(t) && Number.isFinite(tolerance) && Math.abs(nowMs / 1000 - t) <= tolerance;
}

/** The key bytes of a Standard Webhooks secret: `whsec_` + base64 (the prefix is optional, as in the reference libraries). */
export function standardWebhookKey(secret: string): Buffer {
  return Buffer.from(secret.startsWith('whsec_') ? secret.slice(6) : secret, 'base64');
}

/** The Standard Webhooks signature header value (`v1,<base64>`) of one message. */
export function signStandardWebhook(secret: string, id: string, timestampSeconds: number, body: string): string {
  const mac = crypto
    .createHmac('sha256', standardWebhookKey(secret))
    .update(`${id}.${timestampSeconds}.${body}`)
    .digest('base64');
  return `v1,${mac}`;
}

/** A header of a header map whatever the case of its name (function inputs have lower-case names already). */
function header(headers: unknown, name: string): string | undefined {
  if (!headers || typeof headers !== 'object') return undefined;
  for (const [k, v] of Object.entries(headers as Record<string, unknown>))
    if (k.toLowerCase() === name) return typeof v === 'string' ? v : undefined;
  return undefined;
}

/**
 * Standard Webhooks (and Svix, whose `svix-*` headers are the same scheme): `webhook-id`, `webhook-timestamp` and
 * `webhook-signature` (space-separated `v1,<base64>` entries, any one may match) over `id.timestamp.rawBody`, keyed
 * by the base64-decoded `whsec_` secret; the timestamp must lie within `toleranceSeconds` (default 300) of now.
 */
export function verifyStandardWebhook(
  secret: unknown,
  headers: unknown,
  rawBody: unknown,
  toleranceSeconds?: unknown,
  nowMs = Date.now(),
): boolean {
  if (typeof secret !== 'string' || secret === '') return false;
  const id = header(headers, 'webhook-id') ?? header(headers, 'svix-id');
  const ts = header(headers, 'webhook-timestamp') ?? header(headers, 'svix-timestamp');
  const signatures = header(headers, 'webhook-signature') ?? header(headers, 'svix-signature');
  if (!id || !ts || !signatures || !/^\d+$/.test(ts)) return false;
  if (!timestampWithin(Number(ts), toleranceSeconds, nowMs)) return false;
  const expected = signStandardWebhook(secret, id, Number(ts), text(rawBody)).slice(3);
  let ok = false;
  // Every entry is compared (no early exit), so the time taken does not say which one matched.
  for (const entry of signatures.split(' ')) {
    const [version, sig] = entry.split(',', 2);
    if (version === 'v1' && sig !== undefined && safeEqual(sig, expected)) ok = true;
  }
  return ok;
}

/**
 * Stripe-style timestamped signatures: a header `t=<unix seconds>,v1=<hex>[,v1=<hex>...]` whose `v1` is the
 * HMAC-SHA256 (hex) of `t.rawBody` keyed by the secret's UTF-8 bytes (any `v1` may match); `t` must lie within
 * `toleranceSeconds` (default 300) of now.
 */
export function verifyStripeSignature(
  secret: unknown,
  signatureHeader: unknown,
  rawBody: unknown,
  toleranceSeconds?: unknown,
  nowMs = Date.now(),
): boolean {
  if (typeof secret !== 'string' || secret === '' || typeof signatureHeader !== 'string') return false;
  let t: string | undefined;
  const v1: string[] = [];
  for (const part of signatureHeader.split(',')) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't') t = value;
    else if (key === 'v1') v1.push(value);
  }
  if (!t || !/^\d+$/.test(t) || v1.length === 0) return false;
  if (!timestampWithin(Number(t), toleranceSeconds, nowMs)) return false;
  const expected = hmac('sha256', secret, `${t}.${text(rawBody)}`, 'hex');
  let ok = false;
  for (const sig of v1) if (safeEqual(sig, expected)) ok = true;
  return ok;
}

/** The helpers templates call (merged into templates.ts HELPERS): plain values in, plain values out. */
export const SIGNATURE_HELPERS = {
  /** HMAC-SHA1 of `data` keyed by `key`: hex, or `"base64"` / `"base64url"` of the digest's bytes. */
  hmacSha1: (key: unknown, data: unknown, encoding?: unknown) => hmac('sha1', key, data, encoding),
  /** HMAC-SHA512 of `data` keyed by `key`: hex, or `"base64"` / `"base64url"` of the digest's bytes. */
  hmacSha512: (key: unknown, data: unknown, encoding?: unknown) => hmac('sha512', key, data, encoding),
  /** `verifyStandardWebhook(secret, input.headers, input.rawBody, toleranceSeconds?)`: Standard Webhooks / Svix. */
  verifyStandardWebhook: (secret: unknown, headers: unknown, rawBody: unknown, toleranceSeconds?: unknown) =>
    verifyStandardWebhook(secret, headers, rawBody, toleranceSeconds),
  /** `verifyStripeSignature(secret, input.headers['stripe-signature'], input.rawBody, toleranceSeconds?)`. */
  verifyStripeSignature: (secret: unknown, signatureHeader: unknown, rawBody: unknown, toleranceSeconds?: unknown) =>
    verifyStripeSignature(secret, signatureHeader, rawBody, toleranceSeconds),
  /** True when a timestamp (Unix seconds or ISO 8601) is within `toleranceSeconds` (default 300) of now. */
  timestampWithin: (ts: unknown, toleranceSeconds?: unknown) => timestampWithin(ts, toleranceSeconds),
};
