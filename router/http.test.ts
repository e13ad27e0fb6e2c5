import { describe, it, expect } from '@jest/globals';
import type { ApolloServer } from '@apollo/server';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GraphQLError } from 'graphql';
import type { RequestContext } from '../platform/auth.ts';
import { serveGraphQL, type GraphQLHttpRouter } from './http.ts';

/** A reply that records what is written. */
function recordingReply() {
  const sent: { status?: number; type?: string; body?: string } = {};
  const reply = {
    code(status: number) {
      sent.status = status;
      return reply;
    },
    type(type: string) {
      sent.type = type;
      return reply;
    },
    header() {
      return reply;
    },
    async send(body: string) {
      sent.body = body;
    },
  };
  return { reply: reply as unknown as FastifyReply, sent };
}

const request = (method: 'GET' | 'POST', op: Record<string, unknown>) =>
  ({
    method,
    url: '/graphql',
    headers: { 'content-type': 'application/json' },
    body: method === 'POST' ? op : undefined,
    query: method === 'GET' ? op : {},
  }) as unknown as FastifyRequest;

describe('serveGraphQL', () => {
  // The limits are the first thing to read a caller's document: a document over them never reaches the fast path,
  // Apollo Server's parser and validation, or the gateway's planner (some of graphql-js's rules are not linear).
  it.each([
    ['POST', 'a plain JSON POST (the fast path)'],
    ['GET', 'a GET (Apollo Server)'],
  ] as const)('%s: refuses a document over the limits before anything else reads it (%s)', async (method, _what) => {
    const seen: string[] = [];
    const router: GraphQLHttpRouter = {
      checkLimits: (query) => {
        seen.push(`limits:${query}`);
        return [
          new GraphQLError('over the depth limit', {
            extensions: { code: 'GRAPHQL_LIMIT_EXCEEDED', http: { status: 400 } },
          }),
        ];
      },
      fastQuery: async () => {
        seen.push('fast path');
        return { data: {} };
      },
      apollo: {
        executeHTTPGraphQLRequest: async () => {
          seen.push('apollo');
          throw new Error('not reached');
        },
      } as unknown as ApolloServer<RequestContext>,
    };
    const { reply, sent } = recordingReply();
    await serveGraphQL(router, request(method, { query: '{ bomb }' }), reply, {} as RequestContext);
    expect(seen).toEqual(['limits:{ bomb }']);
    expect(sent.status).toBe(400);
    expect(JSON.parse(sent.body!).errors[0].extensions.code).toBe('GRAPHQL_LIMIT_EXCEEDED');
  });

  it('hands a document within the limits on (the stub can see it, so the test above can fail)', async () => {
    const seen: string[] = [];
    const router: GraphQLHttpRouter = {
      checkLimits: () => [],
      fastQuery: async () => {
        seen.push('fast path');
        return { data: { ok: true } };
      },
      apollo: {} as ApolloServer<RequestContext>,
    };
    const { reply, sent } = recordingReply();
    await serveGraphQL(router, request('POST', { query: '{ ok }' }), reply, {} as RequestContext);
    expect(seen).toEqual(['fast path']);
    expect(sent).toMatchObject({ status: 200, body: '{"data":{"ok":true}}\n' });
  });
});
