// The database console's logic without a browser: the column editor's statements (every name quoted, types only from
// the offered list), the policy form's CREATE / ALTER / DROP POLICY, CSV writing (RFC 4180), typing a CSV record by its columns, line numbers of records holding line
// breaks, batching, and finding the refused rows of a batch by splitting it.
import { describe, expect, it } from '@jest/globals';
import {
  addColumnSql,
  createPolicySql,
  dropColumnSql,
  dropTableSql,
  editPolicySql,
  renameColumnSql,
  retypeColumnSql,
  type Column,
  type PolicyDraft,
} from '../../dashboard/src/lib/tables.ts';
import { batches, csvRecord, guessMapping, insertSplitting, linesOf, rowOf } from '../../dashboard/src/lib/csv.ts';

const hostile = 'x"; drop table victims; --';

describe('the column editor statements', () => {
  it('quote every name, so a hostile one stays a name', () => {
    expect(addColumnSql(hostile, { name: 'select', type: 'text', nullable: false, default: "'a'" })).toBe(
      `alter table "x""; drop table victims; --" add column "select" text not null default 'a'`,
    );
    expect(renameColumnSql('t', 'My Col', hostile)).toBe(
      `alter table "t" rename column "My Col" to "x""; drop table victims; --"`,
    );
    expect(dropColumnSql('t', hostile)).toBe(`alter table "t" drop column "x""; drop table victims; --"`);
    expect(retypeColumnSql('t', 'n', 'integer', ' n::integer ')).toBe(
      `alter table "t" alter column "n" type integer using (n::integer)`,
    );
    expect(dropTableSql(hostile)).toBe(`drop table "x""; drop table victims; --"`);
  });

  it('refuse a type that is not offered, and an empty name', () => {
    expect(() => addColumnSql('t', { name: 'a', type: 'text; drop table x', nullable: true, default: '' })).toThrow(
      'not one of the offered types',
    );
    expect(() => retypeColumnSql('t', 'a', 'int); drop table x; --', '')).toThrow('not one of the offered types');
    expect(() => renameColumnSql('t', 'a', '  ')).toThrow('required');
  });
});

const col = (name: string, type: string, extra: Partial<Column> = {}): Column => ({
  name,
  type,
  nullable: true,
  default: null,
  pk: false,
  ...extra,
});

describe('CSV', () => {
  it('writes RFC 4180: quotes only where needed, doubled quotes, NULL empty and the empty text quoted, CRLF', () => {
    expect(csvRecord([1, 'plain', 'a,b', 'say "hi"', 'two\nlines', null, '', { a: [1] }, ['x', 'y']])).toBe(
      '1,plain,"a,b","say ""hi""","two\nlines",,"","{""a"":[1]}","[""x"",""y""]"\r\n',
    );
  });

  it('maps header fields to columns by name, then ignoring case, else skips them', () => {
    expect(guessMapping(['id', 'Title', 'other'], [col('id', 'integer'), col('title', 'text')])).toEqual([
      'id',
      'title',
      null,
    ]);
  });

  it('types a record by its columns and says why one cannot be', () => {
    const cols = new Map(
      [
        col('id', 'integer'),
        col('data', 'jsonb'),
        col('tags', 'text[]'),
        col('made', 'timestamp with time zone', { nullable: false, default: 'now()' }),
      ].map((c) => [c.name, c]),
    );
    const mapping = ['id', 'data', 'tags', 'made', null];
    expect(rowOf(['1', '{"a":1}', '["x"]', '', 'skipped'], mapping, cols)).toEqual({
      id: '1',
      data: { a: 1 },
      tags: ['x'],
    });
    expect(rowOf(['', '', '', '2026-01-01', 'x'], mapping, cols)).toEqual({
      id: null,
      data: null,
      tags: null,
      made: '2026-01-01',
    });
    expect(rowOf(['1', '{nope', '', '', ''], mapping, cols)).toMatch(/column data: not JSON/);
    expect(rowOf(['1', '2'], mapping, cols)).toBe('expected 5 fields, found 2');
  });

  it('counts the lines of a record holding line breaks', () => {
    expect(linesOf(['a', 'b'])).toBe(1);
    expect(linesOf(['a\nb', 'c\r\nd\re'])).toBe(4);
  });

  it('cuts batches by rows and by bytes', () => {
    const rows = Array.from({ length: 25 }, (_, i) => ({ line: i + 2, row: { n: i } }));
    expect(batches(rows, 10).map((b) => b.length)).toEqual([10, 10, 5]);
    expect(batches(rows, 1000, 30).every((b) => JSON.stringify(b.map((r) => r.row)).length <= 40)).toBe(true);
  });

  it('splits a refused batch until each refused row is alone, and inserts the others', async () => {
    const rows = Array.from({ length: 13 }, (_, i) => ({ line: i + 2, row: { n: i } }));
    const inserted: number[] = [];
    const refuse = new Set([3, 4, 11]);
    const insert = async (batch: Record<string, unknown>[]) => {
      const bad = batch.find((r) => refuse.has(r.n as number));
      if (bad) throw Object.assign(new Error(`row ${String(bad.n)} refused`), { status: 409 });
      inserted.push(...batch.map((r) => r.n as number));
    };
    const errors: { line: number; message: string }[] = [];
    expect(await insertSplitting(rows, insert, (e) => errors.push(e))).toBe(10);
    expect(errors).toEqual([
      { line: 5, message: 'row 3 refused' },
      { line: 6, message: 'row 4 refused' },
      { line: 13, message: 'row 11 refused' },
    ]);
    expect(inserted.sort((a, b) => a - b)).toEqual([0, 1, 2, 5, 6, 7, 8, 9, 10, 12]);
  });

  it('stops on an error that is not about the rows (the key, the network)', async () => {
    const insert = () => Promise.reject(Object.assign(new Error('no'), { status: 401 }));
    await expect(insertSplitting([{ line: 2, row: {} }], insert, () => {})).rejects.toThrow('no');
  });
});

describe('the policy form statements', () => {
  const base: PolicyDraft = {
    name: 'own rows',
    command: 'SELECT',
    roles: ['public'],
    permissive: true,
    using: "owner = current_setting('request.user_id', true)",
    withCheck: '',
  };

  it('creates a policy with quoted names, only the clauses its command takes', () => {
    expect(createPolicySql(hostile, { ...base, name: hostile, withCheck: 'ignored for select' })).toBe(
      `create policy "x""; drop table victims; --" on "x""; drop table victims; --"\n  as permissive for select to public\n  using (owner = current_setting('request.user_id', true))`,
    );
    expect(
      createPolicySql('t', {
        ...base,
        command: 'INSERT',
        roles: ['current_user'],
        permissive: false,
        withCheck: 'true',
      }),
    ).toBe('create policy "own rows" on "t"\n  as restrictive for insert to current_user\n  with check (true)');
    expect(() => createPolicySql('t', { ...base, roles: ['"x"; drop table y'] })).toThrow('is not one of');
    expect(() => createPolicySql('t', { ...base, using: ' ' })).toThrow('USING');
  });

  it('edits with ALTER POLICY when it can, DROP and CREATE when the command or kind changes', () => {
    expect(editPolicySql('t', base, { ...base, using: 'true', name: 'all rows' })).toEqual([
      'alter policy "own rows" on "t"\n  using (true)',
      'alter policy "own rows" on "t" rename to "all rows"',
    ]);
    expect(editPolicySql('t', { ...base, roles: null }, { ...base, roles: null, using: 'true' })).toEqual([
      'alter policy "own rows" on "t"\n  using (true)',
    ]);
    expect(editPolicySql('t', base, { ...base, command: 'ALL' })).toEqual([
      'drop policy "own rows" on "t"',
      `create policy "own rows" on "t"\n  as permissive for all to public\n  using (owner = current_setting('request.user_id', true))`,
    ]);
    expect(() => editPolicySql('t', base, { ...base })).toThrow('Nothing has changed');
  });
});
