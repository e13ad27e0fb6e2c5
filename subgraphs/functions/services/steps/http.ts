// `HTTP`: an outbound request. `request: {method, url, headers, body, timeout_ms}`, all templates.
// Network errors, time-outs, 429 and 5xx answers are retried (the step's `retries`, with backoff) and
// fail the step when the attempts are used up; any other answer is the result `{status, headers, body}`.
// Loopback, private and link-local targets are refused unless the operator allows them (outbound.ts).
import { compileChecked, objectField } from './fields.ts';
import { StepFailure, StepFieldError, type StepKind } from './types.ts';

const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS'];
const REQUEST_FIELDS = ['method', 'url', 'headers', 'body', 'timeout_ms'];
export const HTTP_TIMEOUT_DEFAULT_MS = 10_000;
export const HTTP_TIMEOUT_MAX_MS = 60_000;

function checkUrl(raw: unknown, field: string): URL {
  let url: URL | undefined;
  try {
    url = typeof raw === 'string' ? new URL(raw) : undefined;
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    throw new StepFieldError(field, 'must be an absolute http or https URL');
  return url;
}

export const httpStep: StepKind = {
  kind: 'HTTP',
  description: '`request`: {method, url, headers, body, timeout_ms}; the output is the response body',
  fields: ['request'],
  prepare(step) {
    const request = objectField(step, 'request');
    if (!request) throw new StepFieldError('request', 'is required: {method, url, headers?, body?, timeout_ms?}');
    for (const key of Object.keys(request))
      if (!REQUEST_FIELDS.includes(key))
        throw new StepFieldError(`request.${key}`, `is not a request field (${REQUEST_FIELDS.join(', ')})`);
    if (typeof request.url !== 'string' || request.url === '')
      throw new StepFieldError('request.url', 'is required (a URL, may contain {{ }})');
    if (!request.url.includes('{{')) checkUrl(request.url, 'request.url');
    const method = request.method ?? 'GET';
    if (typeof method !== 'string' || (!method.includes('{{') && !METHODS.includes(method.toUpperCase())))
      throw new StepFieldError('request.method', `must be one of ${METHODS.join(', ')}`);
    const timeout = request.timeout_ms ?? HTTP_TIMEOUT_DEFAULT_MS;
    if (typeof timeout !== 'number' || !Number.isInteger(timeout) || timeout < 1 || timeout > HTTP_TIMEOUT_MAX_MS) {
      throw new StepFieldError('request.timeout_ms', `must be a whole number from 1 to ${HTTP_TIMEOUT_MAX_MS}`);
    }
    if (
      request.headers !== undefined &&
      (request.headers === null || typeof request.headers !== 'object' || Array.isArray(request.headers))
    ) {
      throw new StepFieldError('request.headers', 'must be an object of header names to values');
    }
    const template = compileChecked({ ...request, method, timeout_ms: timeout }, 'request');
    return {
      templates: { request: template },
      async run(resolved, ctx) {
        const r = resolved.request as {
          method: unknown;
          url: unknown;
          headers?: unknown;
          body?: unknown;
          timeout_ms: number;
        };
        const m = String(r.method).toUpperCase();
        if (!METHODS.includes(m))
          throw new StepFailure(
            'BAD_REQUEST',
            `request.method "${String(r.method)}" is not one of ${METHODS.join(', ')}`,
          );
        let url: URL;
        try {
          url = checkUrl(r.url, 'request.url');
        } catch (err) {
          throw new StepFailure('BAD_REQUEST', `request.url "${String(r.url)}" ${(err as Error).message}`);
        }
        const headers: Record<string, string> = {};
        for (const [k, v] of Object.entries((r.headers as Record<string, unknown> | undefined) ?? {})) {
          if (v === undefined || v === null) continue;
          headers[k.toLowerCase()] = typeof v === 'string' ? v : String(v);
        }
        let body: string | undefined;
        if (r.body !== undefined && r.body !== null && m !== 'GET' && m !== 'HEAD') {
          if (typeof r.body === 'string') body = r.body;
          else {
            body = JSON.stringify(r.body);
            headers['content-type'] ??= 'application/json';
          }
        }
        if (ctx.dryRun) return { body: null, status: null, headers: {}, dry_run: true };
        const timeoutMs = Math.max(1, Math.min(r.timeout_ms, ctx.remainingMs()));
        let res;
        try {
          res = await ctx.deps.http({ method: m, url, headers, body, timeoutMs, signal: ctx.signal });
        } catch (err) {
          const e = err as Error & { refused?: boolean };
          if (e.refused) throw new StepFailure('HTTP_REFUSED', e.message, false);
          throw new StepFailure('HTTP_ERROR', `${m} ${url.origin}${url.pathname}: ${e.message}`, true);
        }
        if (res.status === 429 || res.status >= 500)
          throw new StepFailure('HTTP_ERROR', `${m} ${url.origin}${url.pathname} answered ${res.status}`, true);
        return { body: res.body, status: res.status, headers: res.headers };
      },
    };
  },
};
