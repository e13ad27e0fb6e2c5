// Template evaluation and the rules that keep expressions safe.
import { describe, expect, it } from '@jest/globals';
import crypto from 'node:crypto';
import { compileExpression, compileTemplate, mailVariables, renderMailText, templateScope } from './templates.ts';

const input = {
  body: { amount: 42, customer: { name: 'Ada' }, items: [1, 2, 3] },
  headers: { 'x-signature': 'abc', 'content-type': 'application/json' },
  method: 'POST',
  query: { page: '2' },
  rawBody: '{"amount":42}',
};
const scope = templateScope({
  input,
  steps: { verify: { body: { ok: true, id: 'o-1' } } },
  secrets: { SIGNING: 'whsec' },
  env: { project_id: 'p' },
});
const render = (t: unknown) => compileTemplate(t).render(scope);
const reason = (src: string) => {
  try {
    compileExpression(src);
    return 'accepted';
  } catch (err) {
    return (err as Error).message;
  }
};

describe('template evaluation', () => {
  it('keeps the value type of a string that is exactly one placeholder', () => {
    expect(render('{{ input.body.amount }}')).toBe(42);
    expect(render('{{input.body.customer}}')).toEqual({ name: 'Ada' });
    expect(render('{{ input.body.amount > 10 }}')).toBe(true);
  });

  it('makes a string when text surrounds placeholders', () => {
    expect(render('Hello {{ input.body.customer.name }}, {{ input.body.amount }} EUR')).toBe('Hello Ada, 42 EUR');
    expect(render('items: {{ input.body.items }}')).toBe('items: [1,2,3]');
    expect(render('missing: [{{ input.body.nope }}]')).toBe('missing: []');
  });

  it('renders objects and arrays of templates, leaving other values alone', () => {
    expect(
      render({ a: '{{ input.method }}', b: ['{{ input.query.page }}', 3, null, true], c: { d: 'plain' } }),
    ).toEqual({ a: 'POST', b: ['2', 3, null, true], c: { d: 'plain' } });
  });

  it('reads every variable of the seed', () => {
    expect(render('{{ input.body }}')).toEqual(input.body);
    expect(render('{{ input.headers }}')).toEqual(input.headers);
    expect(render('{{ input.method }}')).toBe('POST');
    expect(render('{{ input.query.page }}')).toBe('2');
    expect(render('{{ input.rawBody }}')).toBe('{"amount":42}');
    expect(render('{{ steps.verify.body.id }}')).toBe('o-1');
  });

  it('looks headers up case-insensitively', () => {
    expect(render("{{ input.headers['X-Signature'] }}")).toBe('abc');
    expect(render('{{ input.headers["CONTENT-TYPE"] }}')).toBe('application/json');
  });

  it('has the helpers: hmacSha256, safeEqual, base64, json, now', () => {
    const expected = crypto.createHmac('sha256', 'whsec').update('{"amount":42}').digest('hex');
    expect(render('{{ hmacSha256(secrets.SIGNING, input.rawBody) }}')).toBe(expected);
    expect(render(`{{ safeEqual(hmacSha256(secrets.SIGNING, input.rawBody), '${expected}') }}`)).toBe(true);
    expect(render("{{ safeEqual('a', 'b') }}")).toBe(false);
    expect(render("{{ base64('hi') }}")).toBe('aGk=');
    expect(render('{{ json(input.body.customer) }}')).toBe('{"name":"Ada"}');
    expect(Date.parse(render('{{ now() }}') as string)).not.toBeNaN();
  });

  it('handles braces and quotes inside placeholders', () => {
    expect(render("{{ {a: {b: '}}'}} }}")).toEqual({ a: { b: '}}' } });
  });

  it('cannot climb to prototypes or constructors', () => {
    expect(render('{{ input.body.constructor }}')).toBeUndefined();
    expect(render("{{ input.body['__proto__'] }}")).toBeUndefined();
    expect(render("{{ input.body.items['constructor'] }}")).toBeUndefined();
    expect(render("{{ hmacSha256['constructor'] }}")).toBeUndefined();
    expect(typeof Function.prototype.constructor).toBe('function');
  });

  it('reads plain paths exactly as the expression interpreter does', () => {
    const data = templateScope({
      input: {
        ...input,
        body: { ...input.body, nothing: null, text: 'abc', nested: { a: [{ b: 0 }], 'dash-key': 1 } },
      },
      steps: { verify: { body: { ok: true, rows: [{ id: 7 }] } }, skipped: { body: null, skipped: true } },
      secrets: { SIGNING: 'whsec' },
      env: { project_id: 'p' },
    });
    const paths = [
      'input',
      'input.body.amount',
      'input.body.customer.name',
      'input.body.items[1]',
      'input.body.items.length',
      'input.body.text.length',
      'input.body.text[0]',
      'input.body.nothing',
      'input.body.nothing.deeper',
      'input.body.missing.deeper',
      "input.body.nested.a[0]['b']",
      "input.body.nested['dash-key']",
      "input.headers['X-Signature']",
      'input.headers.X_Signature',
      'steps.verify.body.rows[0].id',
      'steps.skipped.body.x',
      'steps.nope.body',
      'secrets.SIGNING',
      'input.body.constructor',
      "input.body['__proto__']",
      'input.body.items.map',
      'input.body.amount.toFixed',
      'now',
      'env.project_id',
      'input.body.items[5]',
    ];
    for (const src of paths) {
      // `true ? <path> : null` is not a plain path: the library's interpreter evaluates it.
      const direct = compileTemplate(`{{ ${src} }}`).render(data);
      const interpreted = compileTemplate(`{{ true ? ${src} : null }}`).render(data);
      expect([src, direct]).toEqual([src, interpreted]);
    }
  });

  it('reports a failing expression with its path and leaves Function.prototype intact', () => {
    expect(() => compileTemplate({ x: ['{{ input.body.amount() }}'] }).render(scope)).toThrow(/x\[0\]|failed/);
    expect(typeof Function.prototype.constructor).toBe('function');
  });
});

describe('template validation', () => {
  it('refuses assignments', () => {
    expect(reason('a = 1')).toMatch(/assignments/);
    expect(reason('input.body.x = 1')).toMatch(/assignments/);
  });

  it('refuses unknown names, this, several statements and filters', () => {
    expect(reason('constructor')).toMatch(/unknown name "constructor"/);
    expect(reason('process')).toMatch(/unknown name "process"/);
    expect(reason('this')).toMatch(/this/);
    expect(reason('input; steps')).toMatch(/one expression/);
    expect(reason('input | json')).not.toBe('accepted');
  });

  it('refuses expressions that do not parse', () => {
    expect(reason('input.')).not.toBe('accepted');
    expect(reason('(((')).not.toBe('accepted');
    expect(reason('  ')).toMatch(/empty/);
    expect(() => compileTemplate('{{ input.body ')).toThrow(/not closed/);
  });

  it('collects the steps a template reads', () => {
    expect(compileTemplate({ a: '{{ steps.one.body }}', b: "{{ steps['two'].body.x }}" }).stepRefs.sort()).toEqual([
      'one',
      'two',
    ]);
    expect(reason('steps[input.body.name]')).toMatch(/named literally/);
  });
});

describe('e-mail templates', () => {
  it('renders variables and escapes them in html', () => {
    expect(renderMailText('Hi {{ name }}', { name: 'Ada' }, false, 'text')).toBe('Hi Ada');
    expect(renderMailText('<p>{{ name }}</p>', { name: '<b>x</b>' }, true, 'html')).toBe('<p>&lt;b&gt;x&lt;/b&gt;</p>');
  });

  it('lists the variables a template reads', () => {
    expect(mailVariables('{{ user.name }} {{ link }} {{ upper(code) }}', 'text').sort()).toEqual([
      'code',
      'link',
      'user',
    ]);
  });
});
