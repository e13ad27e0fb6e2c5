// CORS at the front door: which web pages of other origins may call Tessera from a browser.
//
// Two kinds of rule (platform/cors.ts): the platform-wide one (TESSERA_CORS_ORIGINS) and each project's own
// (`/auth/api/v1/projects/:id/cors`, kept by the tenant subgraph). A preflight carries no credential, so it cannot
// name its project: it is answered for an origin that the platform or ANY project allows (methods and headers of
// every rule allowing it, the smallest max age). The actual request then carries the credential: with a project's
// key or an end-user token, the origin must be allowed by the platform or by THAT project, or the request is
// refused before it runs (403 ORIGIN_NOT_ALLOWED), so a page cannot use a project's publishable key from an origin
// the project did not list. Tenant management (/auth/api/v1/tenant*, /auth/api/v1/projects*) is a developer's own
// console: only the platform-wide origins reach it, preflights and credential-less calls (sign-in) included, never an
// origin some project allowed for its app. Requests without credentials (public downloads, discovery) and the OIDC endpoints a
// public client calls (/token, /userinfo, ...) are answered for any allowed origin. A same-origin request (the
// GraphiQL page, the hosted sign-in page) is not a CORS request. Never `*` with credentials: a wildcard rule is
// answered `*`, credentials only ever go to an exact origin of a rule that asks for them.
//
// Project rules are kept in memory (the tenant subgraph's internal `_corsRules`), reloaded when the broadcast
// `cors.changed` arrives (the change's own process hears it at commit), when the broadcast connection comes back,
// and at least every minute.
import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Config } from '../platform/config.ts';
import type { Logger } from '../platform/logger.ts';
import type { Principal } from '../platform/auth.ts';
import { AppError } from '../platform/errors.ts';
import { startBroadcastListener, type BroadcastListener } from '../platform/broadcast.ts';
import {
  CORS_DEFAULT_ALLOWED_HEADERS,
  CORS_DEFAULT_EXPOSED_HEADERS,
  CORS_METHODS,
  ruleAllows,
  type CorsRule,
} from '../platform/cors.ts';
import { INTERNAL_OPERATIONS, callInternal } from '../platform/internal-operations.ts';
import type { Router } from '../router/router.ts';

/** Wire endpoints of the identity provider a public (PKCE) client calls from its page: any allowed origin. */
/**
 * Tenant management (developer accounts, sessions, projects): a developer's own console, not a project's app. Only the
 * platform-wide origins (TESSERA_CORS_ORIGINS) may call it from a browser, preflights and credential-less calls (sign
 * up, sign in, refresh, forgot password) included: an origin some project allowed for its own app must not be able to
 * sign developers in and read their tokens.
 */
function isTenantPath(path: string): boolean {
  return (
    path === '/auth/api/v1/tenant' ||
    path.startsWith('/auth/api/v1/tenant/') ||
    path.startsWith('/auth/api/v1/tenants/') ||
    path === '/auth/api/v1/projects' ||
    path.startsWith('/auth/api/v1/projects/')
  );
}

const OIDC_PUBLIC = new Set([
  '/.well-known/openid-configuration',
  '/jwks.json',
  '/token',
  '/userinfo',
  '/revocation',
  '/introspect',
]);

const RELOAD_EVERY_MS = 60_000;
/** Without a broadcast connection nothing says a rule changed: reload often. */
const RELOAD_UNTOLD_MS = 5_000;

type Snapshot = { projects: Map<string, CorsRule>; loadedAt: number };
type PendingState = { origin: string; resolved: boolean; reply: FastifyReply };

const PENDING = Symbol('tessera.cors');
type WithCors = FastifyRequest & { [PENDING]?: PendingState };

export type Cors = {
  /** After the request's credential is known: allows the origin for its project, or throws ORIGIN_NOT_ALLOWED. */
  check: (req: FastifyRequest, principal: Principal) => Promise<void>;
  /**
   * The same rule for a WebSocket, once its `connection_init` named the credential: a browser's socket (it always
   * sends `Origin`) from another origin runs only if the platform or the credential's project allows that origin.
   * Throws ORIGIN_NOT_ALLOWED; the socket server then closes the socket 4403.
   */
  checkSocket: (request: IncomingMessage, principal: Principal) => Promise<void>;
  /** Forgets the project rules (they are reloaded on the next request that needs them). */
  invalidate: () => void;
  stop: () => Promise<void>;
};

function platformRuleOf(config: Config): CorsRule | undefined {
  if (config.corsOrigins.length === 0) return undefined;
  return {
    origins: config.corsOrigins,
    methods: [...CORS_METHODS],
    allowedHeaders: [],
    exposedHeaders: [],
    maxAge: config.corsMaxAge,
    credentials: config.corsAllowCredentials,
  };
}

/**
 * Whether the page is on Tessera's own origin (its public URL, or the host the request was sent to). `protocol` is the
 * request's as the front door sees it (`http`, `https`).
 */
function sameOrigin(host: string | undefined, protocol: string, origin: string, issuer: string): boolean {
  if (origin === new URL(issuer).origin) return true;
  try {
    const o = new URL(origin);
    return o.host === host && o.protocol === `${protocol}:`;
  } catch {
    return false;
  }
}

const hasCredentials = (req: FastifyRequest): boolean =>
  req.headers['x-api-key'] !== undefined || req.headers.authorization !== undefined;

/** Sets the headers of an actual (non-preflight) response for the rules allowing the origin. */
function allowActual(
  reply: FastifyReply,
  origin: string,
  rules: { rule: CorsRule; match: 'exact' | 'wildcard' }[],
): void {
  const credentials = rules.some((r) => r.match === 'exact' && r.rule.credentials);
  const exact = rules.some((r) => r.match === 'exact');
  void reply.header('access-control-allow-origin', exact || credentials ? origin : '*');
  if (credentials) void reply.header('access-control-allow-credentials', 'true');
  const exposed = new Set<string>(CORS_DEFAULT_EXPOSED_HEADERS);
  for (const { rule } of rules) for (const h of rule.exposedHeaders) exposed.add(h);
  void reply.header('access-control-expose-headers', [...exposed].join(', '));
}

/** Installs CORS on the front door (before its routes). */
export async function installCors(
  app: FastifyInstance,
  opts: { config: Config; logger: Logger; router: Router; broadcastUrl?: string },
): Promise<Cors> {
  const { config, router } = opts;
  const logger = opts.logger.child({ component: 'cors' });
  const platform = platformRuleOf(config);
  let snapshot: Snapshot | undefined;
  let loading: Promise<Snapshot> | undefined;
  let generation = 0;
  let listener: BroadcastListener | undefined;
  if (opts.broadcastUrl) {
    listener = await startBroadcastListener({ url: opts.broadcastUrl, logger });
    listener.on('cors.changed', () => invalidate());
    listener.onReset(() => invalidate());
  }
  const maxAgeMs = listener ? RELOAD_EVERY_MS : RELOAD_UNTOLD_MS;

  function invalidate(): void {
    generation++;
    snapshot = undefined;
  }

  const load = async (): Promise<Snapshot> => {
    const gen = generation;
    const rows = (
      await callInternal(
        router,
        INTERNAL_OPERATIONS.corsRules,
        {},
        { requestId: 'cors', principal: { kind: 'internal' } },
      )
    )._corsRules;
    const projects = new Map(
      rows.map((r) => [
        r.projectId,
        {
          origins: r.allowedOrigins,
          methods: r.allowedMethods,
          allowedHeaders: r.allowedHeaders,
          exposedHeaders: r.exposedHeaders,
          maxAge: r.maxAge,
          credentials: r.allowCredentials,
        },
      ]),
    );
    const next = { projects, loadedAt: Date.now() };
    if (gen === generation) snapshot = next;
    return next;
  };

  /** The project rules, reloaded when stale; while they cannot be loaded, the last ones (or none) with a warning. */
  const current = async (): Promise<Snapshot> => {
    if (snapshot && Date.now() - snapshot.loadedAt < maxAgeMs) return snapshot;
    loading ??= load().finally(() => (loading = undefined));
    try {
      return await loading;
    } catch (err) {
      logger.warn({ err: (err as Error).message }, 'cors: the project rules could not be loaded');
      return snapshot ?? { projects: new Map(), loadedAt: 0 };
    }
  };

  /** Every rule allowing the origin: the platform's and any project's. */
  const anyAllowing = (s: Snapshot, origin: string): { rule: CorsRule; match: 'exact' | 'wildcard' }[] => {
    const out: { rule: CorsRule; match: 'exact' | 'wildcard' }[] = [];
    if (platform) {
      const match = ruleAllows(platform, origin);
      if (match) out.push({ rule: platform, match });
    }
    for (const rule of s.projects.values()) {
      const match = ruleAllows(rule, origin);
      if (match) out.push({ rule, match });
    }
    return out;
  };

  /** The platform-wide rule, when it allows the origin (tenant management's only rule). */
  const platformAllowing = (origin: string): { rule: CorsRule; match: 'exact' | 'wildcard' }[] => {
    const match = platform ? ruleAllows(platform, origin) : false;
    return platform && match ? [{ rule: platform, match }] : [];
  };

  const refuse = (origin: string, why: string) =>
    new AppError(
      'ORIGIN_NOT_ALLOWED',
      `Requests from ${origin.slice(0, 200)} ${why}. Allow the origin in the project's CORS settings (PUT /auth/api/v1/projects/:id/cors) or TESSERA_CORS_ORIGINS.`,
      {
        origin: origin.slice(0, 200),
      },
    );

  // Callback hooks with a synchronous way out: most requests (servers, apps, same-origin pages) carry no foreign
  // Origin, and an async hook would cost them a promise and a microtask each.
  app.addHook('onRequest', (req, reply, done) => {
    const origin = req.headers.origin;
    if (typeof origin !== 'string' || sameOrigin(req.headers.host, req.protocol, origin, config.issuer)) return done();
    crossOrigin(req, reply, origin).then((answered) => {
      if (!answered) done(); // a preflight was answered here: the request goes no further
    }, done);
  });
  /** The CORS work of a request with a foreign Origin; true when it answered the request itself (a preflight). */
  const crossOrigin = async (req: FastifyRequest, reply: FastifyReply, origin: string): Promise<boolean> => {
    const path = req.url.split('?')[0]!;
    const requestMethod = req.headers['access-control-request-method'];
    const tenantOnly = isTenantPath(path);
    if (req.method === 'OPTIONS' && typeof requestMethod === 'string') {
      const rules = tenantOnly ? platformAllowing(origin) : anyAllowing(await current(), origin);
      if (rules.length === 0)
        throw refuse(
          origin,
          tenantOnly
            ? 'are not allowed for tenant management (only TESSERA_CORS_ORIGINS opens it to other origins)'
            : 'are allowed by no project',
        );
      const methods = new Set<string>();
      const headers = new Set<string>(CORS_DEFAULT_ALLOWED_HEADERS);
      for (const { rule } of rules) {
        rule.methods.forEach((m) => methods.add(m));
        rule.allowedHeaders.forEach((h) => headers.add(h));
      }
      const credentials = rules.some((r) => r.match === 'exact' && r.rule.credentials);
      const exact = rules.some((r) => r.match === 'exact');
      void reply
        .header('access-control-allow-origin', exact || credentials ? origin : '*')
        .header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers')
        .header('access-control-allow-methods', [...methods].join(', '))
        .header('access-control-allow-headers', [...headers].join(', '))
        .header('access-control-max-age', String(Math.min(...rules.map((r) => r.rule.maxAge))));
      if (credentials) void reply.header('access-control-allow-credentials', 'true');
      void reply.code(204).send();
      return true;
    }
    void reply.header('vary', 'Origin');
    if (platform && ruleAllows(platform, origin)) {
      allowActual(reply, origin, [{ rule: platform, match: ruleAllows(platform, origin) as 'exact' | 'wildcard' }]);
      return false;
    }
    if (tenantOnly && !hasCredentials(req)) return false; // no CORS headers: the page cannot read the answer
    if (!hasCredentials(req) || OIDC_PUBLIC.has(path)) {
      const rules = anyAllowing(await current(), origin);
      if (rules.length > 0) allowActual(reply, origin, rules);
      return false;
    }
    // A credential: its project decides, once it is known (`check`, from the front door's contextOf).
    (req as WithCors)[PENDING] = { origin, resolved: false, reply };
    await current();
    return false;
  };

  // An answer given before the credential's project was checked (a bad credential, a refusal) is readable by any page
  // some project allows: errors say nothing a page should not see, and hiding them only makes debugging harder.
  app.addHook('onSend', (req, reply, payload, done) => {
    const pending = (req as WithCors)[PENDING];
    if (pending && !pending.resolved && reply.statusCode >= 400) {
      const rules = anyAllowing(snapshot ?? { projects: new Map(), loadedAt: 0 }, pending.origin);
      if (rules.length > 0) allowActual(reply, pending.origin, rules);
    }
    done(null, payload);
  });

  return {
    async check(req, principal) {
      const pending = (req as WithCors)[PENDING];
      if (!pending || pending.resolved) return;
      const projectId = 'projectId' in principal ? principal.projectId : undefined;
      const rule = projectId ? (await current()).projects.get(projectId) : undefined;
      const match = rule ? ruleAllows(rule, pending.origin) : false;
      if (!rule || !match) {
        throw refuse(
          pending.origin,
          projectId
            ? 'are not allowed by this project'
            : 'are not allowed with this credential (only TESSERA_CORS_ORIGINS opens tenant calls to other origins)',
        );
      }
      pending.resolved = true;
      allowActual(pending.reply, pending.origin, [{ rule, match }]);
    },
    async checkSocket(request, principal) {
      const origin = request.headers.origin;
      if (typeof origin !== 'string') return; // not a browser: servers and apps send no Origin
      // The socket's own scheme (TLS ends here or at a proxy that says so, as for HTTP requests with trustProxy).
      const forwarded = config.trustProxy ? request.headers['x-forwarded-proto'] : undefined;
      const protocol =
        typeof forwarded === 'string'
          ? forwarded.split(',')[0]!.trim()
          : (request.socket as { encrypted?: boolean }).encrypted
            ? 'https'
            : 'http';
      if (sameOrigin(request.headers.host, protocol, origin, config.issuer)) return;
      if (platform && ruleAllows(platform, origin)) return;
      const projectId = 'projectId' in principal ? principal.projectId : undefined;
      const rule = projectId ? (await current()).projects.get(projectId) : undefined;
      if (!rule || !ruleAllows(rule, origin))
        throw refuse(origin, projectId ? 'are not allowed by this project' : 'are not allowed with this credential');
    },
    invalidate,
    async stop() {
      await listener?.stop();
    },
  };
}
