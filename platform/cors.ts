// CORS rules: who may call Tessera from a web page of another origin, and the checks on a rule's values. One
// rule is platform-wide (TESSERA_CORS_* in platform/config.ts), each project may have its own (tenant subgraph,
// `/auth/api/v1/projects/:id/cors`); the front door applies them (rest-compat/cors.ts). Cross-cutting HTTP,
// no domain logic: the tenant subgraph checks a project's rule with the same functions the config uses.

/** Methods a rule may allow. */
export const CORS_METHODS = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** Request headers every rule allows: what Tessera's own clients send. A rule may add more. */
export const CORS_DEFAULT_ALLOWED_HEADERS = [
  'Authorization',
  'Content-Type',
  'X-Api-Key',
  'X-Request-Id',
  'Idempotency-Key',
  'apollo-require-preflight',
  'Accept',
  'Range',
  'If-None-Match',
  'If-Range',
  'If-Modified-Since',
  'Cache-Control',
  'Last-Event-ID',
  'traceparent',
  'tracestate',
] as const;

/** Response headers every rule lets a page read (beyond the CORS-safelisted ones). A rule may add more. */
export const CORS_DEFAULT_EXPOSED_HEADERS = [
  'X-Request-Id',
  'ETag',
  'Content-Range',
  'Content-Length',
  'Content-Disposition',
  'Accept-Ranges',
  'Last-Modified',
  'Location',
  'Retry-After',
  'WWW-Authenticate',
  'X-Execution-Id',
  'X-Idempotent-Replay',
] as const;

export const CORS_DEFAULT_MAX_AGE = 600;
export const CORS_MAX_MAX_AGE = 86_400;
const MAX_ORIGINS = 100;
const MAX_HEADERS = 50;
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,100}$/;

/** A CORS rule: origins (exact `scheme://host[:port]` or `*`), methods, extra request and response headers. */
export type CorsRule = {
  origins: string[];
  methods: string[];
  allowedHeaders: string[];
  exposedHeaders: string[];
  maxAge: number;
  /** `Access-Control-Allow-Credentials: true` for exact origins (never with `*`). */
  credentials: boolean;
};

/** A value the caller sent that a rule cannot hold: names the field and why. */
export class CorsRuleError extends Error {
  field: string;
  reason: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
    this.reason = message;
  }
}

/** An origin as browsers send it: `*`, or scheme, host and port only, lower case, no default port, no path. */
export function normalizeOrigin(raw: string, field = 'origins'): string {
  const value = raw.trim();
  if (value === '*') return '*';
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new CorsRuleError(field, `"${value.slice(0, 200)}" is not an origin (scheme://host[:port], or *)`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new CorsRuleError(field, `"${value.slice(0, 200)}" must be an http or https origin`);
  if (url.username || url.password || url.search || url.hash || (url.pathname !== '/' && url.pathname !== '')) {
    throw new CorsRuleError(
      field,
      `"${value.slice(0, 200)}" must be an origin only: scheme://host[:port], without a path, query or credentials`,
    );
  }
  if (value.replace(/\/$/, '').toLowerCase() !== url.origin)
    throw new CorsRuleError(field, `"${value.slice(0, 200)}" is not written as browsers send it: ${url.origin}`);
  return url.origin;
}

/** Checks and normalises a list of origins; `*` may not come with credentials. */
export function checkOrigins(list: readonly string[], credentials: boolean, field = 'origins'): string[] {
  if (list.length > MAX_ORIGINS) throw new CorsRuleError(field, `at most ${MAX_ORIGINS} origins`);
  const out = [...new Set(list.map((o) => normalizeOrigin(o, field)))];
  if (credentials && out.includes('*'))
    throw new CorsRuleError(field, 'a wildcard origin (*) cannot be combined with allow_credentials: list the origins');
  return out;
}

/** Checks a list of methods (upper-cased). */
export function checkMethods(list: readonly string[], field = 'methods'): string[] {
  const out = [...new Set(list.map((m) => m.trim().toUpperCase()))];
  for (const m of out)
    if (!(CORS_METHODS as readonly string[]).includes(m))
      throw new CorsRuleError(field, `"${m.slice(0, 50)}" is not one of ${CORS_METHODS.join(', ')}`);
  if (out.length === 0) throw new CorsRuleError(field, 'at least one method');
  return out;
}

/** Checks a list of header names. */
export function checkHeaders(list: readonly string[], field: string): string[] {
  if (list.length > MAX_HEADERS) throw new CorsRuleError(field, `at most ${MAX_HEADERS} headers`);
  const out = [...new Set(list.map((h) => h.trim()))];
  for (const h of out)
    if (!TOKEN.test(h) || h === '*') throw new CorsRuleError(field, `"${h.slice(0, 100)}" is not a header name`);
  return out;
}

/** Whether `origin` (as sent) is one of the rule's. */
export function ruleAllows(rule: Pick<CorsRule, 'origins'>, origin: string): 'exact' | 'wildcard' | false {
  if (rule.origins.includes(origin)) return 'exact';
  return rule.origins.includes('*') ? 'wildcard' : false;
}

/** Splits a comma-separated list (configuration), dropping empty items. */
export function splitList(raw: string): string[] {
  return raw
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
}
