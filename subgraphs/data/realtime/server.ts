// The realtime endpoint: a GraphQL subscription served by graphql-yoga (SSE, and graphql-ws through
// the front door). The Apollo gateway cannot serve subscriptions, so this schema stands beside the
// supergraph. Callers authenticate at the front door; a subscriber only ever sees its own project's rows.
import { createSchema, createYoga, filter, pipe, map, createGraphQLError, type Plugin } from 'graphql-yoga';
import { useServer } from 'graphql-ws/use/ws';
import type { WebSocketServer } from 'ws';
import { execute, specifiedRules, subscribe, validate, type DocumentNode, type GraphQLSchema } from 'graphql';
import { limitRules, parseLimited } from '../../../platform/graphql-limits.ts';
import type { RequestContext } from '../../../platform/auth.ts';
import { errors, shapeError } from '../../../platform/errors.ts';
import { JSONScalar } from '../../../platform/graphql-scalars.ts';
import type { SubgraphHttp } from '../../../platform/subgraph.ts';
import type { DataServices } from '../services/index.ts';
import type { Change } from '../services/realtime.ts';

export const REALTIME_PREFIX = '/realtime';

const typeDefs = /* GraphQL */ `
  "Any JSON value."
  scalar JSON

  type Query {
    "Whether the realtime endpoint answers (always true)."
    realtime: Boolean!
  }

  type Subscription {
    "Row changes of the calling project's published tables (optionally one table), as they commit."
    dataChanges("Only this table." table: String): DataChange!
  }

  """
  One committed row change; or, with operation "gap", word that the server's listener for this project was away
  from \`at\` until now: changes committed in that time may not have been sent, so re-read what you show.
  """
  type DataChange {
    "The table (\`*\` for a gap)."
    table: String!
    "insert, update, delete, or gap."
    operation: String!
    "The row after the change (insert, update)."
    row: JSON
    "The row before the change (update, delete). End users receive only its primary key on delete."
    old: JSON
    "Commit time (ISO 8601)."
    at: String!
    "True when the rows were too large to send (over 8000 bytes): read them with find."
    truncated: Boolean!
  }
`;

type YogaContext = { requestContext: RequestContext };

/** Builds the realtime endpoint of the data subgraph. */
export function createRealtimeHttp(services: DataServices): SubgraphHttp {
  const subscribeChanges = async (
    ctx: RequestContext,
    table: string | null | undefined,
  ): Promise<AsyncIterable<{ dataChanges: unknown }>> => {
    const sub = await services.subscriber(ctx.principal);
    return pipe(
      sub.source,
      filter((c: Change) => !table || c.table === table || c.op === 'gap'),
      filter((c: Change) => sub.visible(c)),
      map((c: Change) => ({
        dataChanges: {
          table: c.table,
          operation: c.op,
          row: c.row ?? null,
          old: sub.oldOf(c),
          at: new Date(c.at).toISOString(),
          truncated: c.truncated === true,
        },
      })),
    );
  };

  const schema = createSchema<YogaContext>({
    typeDefs,
    resolvers: {
      JSON: JSONScalar,
      Query: { realtime: () => true },
      Subscription: {
        dataChanges: {
          subscribe: async (_: unknown, args: { table?: string | null }, ctx: YogaContext) => {
            try {
              return await subscribeChanges(ctx.requestContext, args.table);
            } catch (err) {
              const shaped = shapeError(err);
              throw createGraphQLError(shaped.message, {
                extensions: { code: shaped.code, http: { status: shaped.status } },
              });
            }
          },
          resolve: (payload: { dataChanges: unknown }) => payload.dataChanges,
        },
      },
    },
  });

  // The platform's GraphQL limits (depth, aliases, directives, cost, tokens), here as everywhere else.
  const limits = services.limits.graphql;
  const rules = [...specifiedRules, ...limitRules(limits)];
  const validateLimited = (s: GraphQLSchema, document: DocumentNode) => validate(s, document, rules);
  const limited: Plugin = {
    onParse: ({ setParseFn }) =>
      setParseFn((source) => parseLimited(typeof source === 'string' ? source : source.body, limits)),
    onValidate: ({ setValidationFn }) => setValidationFn((s, document) => validateLimited(s, document)),
  };

  const yoga = createYoga<YogaContext>({
    schema,
    plugins: [limited],
    graphqlEndpoint: REALTIME_PREFIX,
    graphiql: false,
    landingPage: false,
    // CORS is the front door's (rest-compat/cors.ts). Yoga's default would answer every origin with credentials allowed.
    cors: false,
    logging: false,
    maskedErrors: false,
  });

  return {
    async fetch(request, ctx) {
      const p = ctx.principal;
      if (p.kind === 'anonymous')
        throw errors.unauthenticated('Send a project key (X-Api-Key) or an end-user access token');
      if (p.kind !== 'project' && p.kind !== 'user' && p.kind !== 'publishable')
        throw errors.forbidden('Realtime takes a project key (X-Api-Key) or an end-user access token');
      // A stream (a subscription) past the plan's max_realtime_subscribers is refused with its HTTP status, before
      // the stream starts; the subscription itself checks again (a race between the two answers in the stream).
      if (request.headers.get('accept')?.includes('text/event-stream')) await services.realtime.assertRoom(p.projectId);
      // GET carries `variables` and `extensions` as JSON in the query string: one that is not a JSON object is the
      // caller's mistake (400 naming it), not a failure of the server (yoga answers its JSON.parse error as a 500).
      if (request.method === 'GET') {
        const params = new URL(request.url).searchParams;
        for (const name of ['variables', 'extensions']) {
          const raw = params.get(name);
          if (raw === null || raw === '') continue;
          let value: unknown;
          try {
            value = JSON.parse(raw);
          } catch {
            throw errors.validation(name, 'must be a JSON object (URL-encoded in the query string)');
          }
          if (value !== null && (typeof value !== 'object' || Array.isArray(value)))
            throw errors.validation(name, 'must be a JSON object');
        }
      }
      return await yoga.fetch(request, { requestContext: ctx });
    },
    websocket(wss: WebSocketServer, authenticate) {
      // Open sockets per project on this process: a project holds at most TESSERA_REALTIME_MAX_SUBSCRIBERS of them.
      const sockets = new Map<string, number>();
      useServer<Record<string, unknown>, { requestContext?: RequestContext; project?: string }>(
        {
          schema,
          execute,
          subscribe,
          validate: validateLimited,
          onSubscribe: async (c, _id, payload) => {
            try {
              parseLimited(payload.query, limits);
            } catch (err) {
              return [err as never];
            }
            // Past the plan's max_realtime_subscribers the subscription gets the protocol's `error` message (the
            // subscription itself checks again, atomically: a race between the two answers with `next` and errors).
            const p = c.extra.requestContext?.principal;
            if (p && (p.kind === 'project' || p.kind === 'user' || p.kind === 'publishable')) {
              try {
                await services.realtime.assertRoom(p.projectId);
              } catch (err) {
                const shaped = shapeError(err);
                return [
                  createGraphQLError(shaped.message, {
                    extensions: { code: shaped.code, http: { status: shaped.status }, details: shaped.details },
                  }),
                ];
              }
            }
            return undefined;
          },
          onConnect: async (c) => {
            try {
              c.extra.requestContext = await authenticate(c.connectionParams ?? {}, c.extra.request);
              const p = c.extra.requestContext.principal;
              if (p.kind !== 'project' && p.kind !== 'user' && p.kind !== 'publishable') return false;
              const open = sockets.get(p.projectId) ?? 0;
              if (open >= services.limits.realtimeMaxSubscribers) return false;
              sockets.set(p.projectId, open + 1);
              c.extra.project = p.projectId;
              return true;
            } catch {
              return false;
            }
          },
          onClose: (c) => {
            const project = c.extra.project;
            if (!project) return;
            c.extra.project = undefined;
            const left = (sockets.get(project) ?? 1) - 1;
            if (left > 0) sockets.set(project, left);
            else sockets.delete(project);
          },
          context: (c) => ({ requestContext: c.extra.requestContext! }),
        },
        wss,
      );
    },
  };
}
