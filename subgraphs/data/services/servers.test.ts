// What of a project server's URL may be shown: host, port, database and user, never a password (in the URL's
// userinfo, percent-encoded, or in its query string), and error texts scrubbed of both.
import { describe, expect, it } from '@jest/globals';
import { redactUrl, scrubSecret } from './servers.ts';

describe('redactUrl', () => {
  it('keeps user, host, port and database, and drops the password', () => {
    expect(redactUrl('postgres://tessera:s3cret@db2.internal:6432/postgres')).toEqual({
      url: 'postgres://tessera@db2.internal:6432/postgres',
      host: 'db2.internal',
      port: 6432,
      database: 'postgres',
      user: 'tessera',
    });
  });

  it('drops a password given in the query string, and a percent-encoded one', () => {
    const r = redactUrl('postgresql://us%40er:p%40ss%3Aword@10.0.0.5/main?password=other&sslmode=require');
    expect(r).toEqual({
      url: 'postgresql://us%40er@10.0.0.5/main',
      host: '10.0.0.5',
      port: 5432,
      database: 'main',
      user: 'us@er',
    });
    expect(JSON.stringify(r)).not.toMatch(/p%40ss|p@ss|other/);
  });

  it('says nothing of a URL it cannot parse', () => {
    expect(redactUrl('not a url with a s3cret')).toEqual({
      url: '(unparsable)',
      host: '',
      port: 0,
      database: '',
      user: '',
    });
  });
});

describe('scrubSecret', () => {
  it('replaces the whole URL and its password, raw or encoded, wherever the text has them', () => {
    const url = 'postgres://u:p%40ss@h:5432/db';
    expect(scrubSecret(`cannot reach ${url}: auth for p@ss and p%40ss failed`, url)).toBe(
      'cannot reach [url]: auth for [redacted] and [redacted] failed',
    );
  });

  it('leaves a text without them as it is', () => {
    expect(scrubSecret('connect ECONNREFUSED 127.0.0.1:1', 'postgres://u:pw@127.0.0.1:1/db')).toBe(
      'connect ECONNREFUSED 127.0.0.1:1',
    );
  });
});
