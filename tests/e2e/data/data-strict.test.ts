// A data API that refuses what it does not understand (issue 27, 4): a body field an action does not define is a 400
// naming it and the fields the action takes (`filter` for `where` never widens a read or a write), in REST bodies, in
// transaction operations and in GraphQL arguments; a missing variable is named as the body field; an unknown action
// lists the actions; a 415 names the content type to send; a project key sent as a bearer token is told where it goes.
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DATA_ACTIONS } from '../../../platform/data-actions.ts';
import { startOneProcess, type TestPlatform } from '../../support/platform.ts';
import { client, type Res } from '../../support/http.ts';
import { createProject, dataCall, signIn, type DataProject } from './data-support.ts';

let platform: TestPlatform;
let project: DataProject;
let call: ReturnType<typeof client>;
let data: (action: string, body: unknown) => Promise<Res>;

function refused(res: Res, status: number, code: string, message: RegExp): void {
  expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
  expect(res.body.error.message).toMatch(message);
}

beforeAll(async () => {
  platform = await startOneProcess();
  call = client(platform.url);
  project = await createProject(call, await signIn(call), 'strict');
  data = dataCall(call, project.apiKey);
  await data('rawSQL', {
    sql: "create table products (id int primary key, name text, price int); insert into products values (1, 'a', 10), (2, 'b', 20)",
  });
}, 90_000);
afterAll(async () => {
  await platform?.close();
});

describe('unknown body fields', () => {
  it('refuses a typo for where instead of answering every row', async () => {
    const res = await data('find', { table: 'products', filter: { id: 1 } });
    refused(res, 400, 'BAD_USER_INPUT', /^filter: unknown field; POST \/v1\/find takes table, select, where/);
    expect(res.body.error.details).toMatchObject({ field: 'filter', allowed: expect.arrayContaining(['where']) });
  });

  it.each(Object.keys(DATA_ACTIONS))('refuses an unknown field on %s, listing the fields it takes', async (action) => {
    const res = await data(action, { whereabouts: {} });
    refused(res, 400, 'BAD_USER_INPUT', /^whereabouts: unknown field; POST \/v1\/\w+ takes /);
    const args = Object.keys(DATA_ACTIONS[action as keyof typeof DATA_ACTIONS].args);
    expect(res.body.error.details.allowed).toEqual(args);
  });

  it('never widens a write: update and delete with a misspelled where change nothing', async () => {
    refused(
      await data('update', { table: 'products', wher: { id: 1 }, set: { price: 0 } }),
      400,
      'BAD_USER_INPUT',
      /^wher: unknown field/,
    );
    refused(
      await data('delete', { table: 'products', Where: { id: 1 } }),
      400,
      'BAD_USER_INPUT',
      /did you mean where\?/,
    );
    const rows = (await data('find', { table: 'products', orderBy: { id: 'asc' } })).body.rows;
    expect(rows).toEqual([
      { id: 1, name: 'a', price: 10 },
      { id: 2, name: 'b', price: 20 },
    ]);
  });

  it('refuses an unknown field of a transaction operation, and nothing of the transaction runs', async () => {
    const res = await data('transaction', {
      operations: [
        { action: 'insert', table: 'products', values: { id: 3, name: 'c' } },
        { action: 'delete', table: 'products', filter: { id: 1 } },
      ],
    });
    refused(
      res,
      400,
      'VALIDATION_FAILED',
      /^operations\[1\]\.filter: unknown field; delete takes action, table, where/,
    );
    expect((await data('find', { table: 'products' })).body.rows).toHaveLength(2);
  });

  it('refuses an unknown argument in GraphQL alike', async () => {
    const res = await call('POST', '/graphql', {
      apiKey: project.apiKey,
      body: { query: '{ dataFind(table: "products", filter: {id: 1}) { rows } }' },
    });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].message).toMatch(/Unknown argument "filter"/);
  });
});

describe('errors in the request’s own words', () => {
  it('names a missing field as the body field, not a GraphQL variable', async () => {
    const res = await data('find', {});
    refused(res, 400, 'BAD_USER_INPUT', /^table: is required$/);
    expect(res.body.error.message).not.toMatch(/Variable|String!/);
  });

  it('names a wrongly typed field as the body field', async () => {
    refused(await data('find', { table: 'products', limit: 'ten' }), 400, 'BAD_USER_INPUT', /^limit: /);
  });

  it('names an unknown or missing field of a whole-body input in snake_case, with the fields it takes', async () => {
    const extra = await call('POST', '/auth/api/v1/tenants/signup', {
      body: { email: 'strict@example.com', password: 'a long password', nickname: 'x' },
    });
    refused(
      extra,
      400,
      'BAD_USER_INPUT',
      /^nickname: unknown field; POST \/auth\/api\/v1\/tenants\/signup takes email, name, password$/,
    );
    const missing = await call('POST', '/auth/api/v1/tenant/login', { body: { email: 'strict@example.com' } });
    refused(missing, 400, 'BAD_USER_INPUT', /^password: is required$/);
    const totp = await call('POST', '/auth/api/v1/tenant/login', {
      body: { email: 'strict@example.com', password: 'x', totp_code: 123456 },
    });
    refused(totp, 400, 'BAD_USER_INPUT', /^totp_code: /);
  });

  it('answers an unknown action with the path as sent and the list of actions', async () => {
    for (const path of ['/v1/select', '/api/v1/select']) {
      const res = await call('POST', path, { apiKey: project.apiKey, body: { table: 'products' } });
      refused(
        res,
        404,
        'ROUTE_NOT_FOUND',
        new RegExp(
          `^No data action "select" \\(POST ${path.replace(/\//g, '\\/')}\\); the actions are POST /v1/find, /v1/findOne`,
        ),
      );
      expect(res.body.error.details.actions).toEqual(Object.keys(DATA_ACTIONS));
    }
  });

  it('names the content type to send on a 415', async () => {
    const res = await call('POST', '/v1/find', {
      apiKey: project.apiKey,
      headers: { 'content-type': 'text/plain' },
      raw: 'table=products',
    });
    refused(
      res,
      415,
      'UNSUPPORTED_MEDIA_TYPE',
      /text\/plain: send the body as JSON \(Content-Type: application\/json\)/,
    );
  });

  it('tells a caller who sent the project key as a bearer token to use X-Api-Key', async () => {
    const res = await call('POST', '/v1/find', { token: project.apiKey, body: { table: 'products' } });
    refused(res, 401, 'INVALID_TOKEN', /send it as X-Api-Key/);
    const other = await call('POST', '/v1/find', { token: 'not-a-token', body: { table: 'products' } });
    expect(other.body.error.message).not.toMatch(/X-Api-Key/);
  });
});
