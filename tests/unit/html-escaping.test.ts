// Every server-rendered HTML page escapes what it did not write itself with the same function (escape-html):
// the identity provider's hosted pages, the REST docs page and e-mail templates' html part.
import { describe, expect, it } from '@jest/globals';
import type { FastifyReply } from 'fastify';
import { errorPage, signInPage } from '../../rest-compat/handlers/identity/pages.ts';
import { renderDocsPage } from '../../rest-compat/docs-page.ts';
import { renderMailText } from '../../subgraphs/functions/services/templates.ts';

const HOSTILE = `"'><script>alert(1)</script><img src=x onerror=alert(2)>&amp;`;
const ESCAPED = '&quot;&#39;&gt;&lt;script&gt;alert(1)&lt;/script&gt;&lt;img src=x onerror=alert(2)&gt;&amp;amp;';

/** A reply that keeps what was sent (the pages only set a status, headers, a type and a body). */
function page(render: (reply: FastifyReply) => unknown): string {
  let body = '';
  const reply = { code: () => reply, header: () => reply, type: () => reply, send: (b: string) => ((body = b), reply) };
  render(reply as unknown as FastifyReply);
  return body;
}

describe('HTML escaping', () => {
  it('the sign-in page keeps a hostile e-mail, error and request parameter inside their attributes and text', () => {
    const html = page((r) =>
      signInPage(r, { request: { state: HOSTILE, [HOSTILE]: 'x' }, email: HOSTILE, error: HOSTILE }),
    );
    expect(html).not.toContain('<script>');
    expect(html).not.toContain('<img');
    expect(html).toContain(`name="state" value="${ESCAPED}"`);
    expect(html).toContain(`name="${ESCAPED}" value="x"`);
    expect(html).toContain(`value="${ESCAPED}"`);
    expect(html).toContain(`<p class="error" role="alert">${ESCAPED}</p>`);
  });

  it('the error page escapes its message', () => {
    expect(page((r) => errorPage(r, 400, HOSTILE))).toContain(`<p class="error">${ESCAPED}</p>`);
  });

  it('the REST docs page escapes what the OpenAPI document says', () => {
    const html = renderDocsPage({
      info: { title: HOSTILE, description: HOSTILE },
      paths: { '/x': { get: { operationId: HOSTILE, summary: HOSTILE, tags: [HOSTILE], responses: { 200: {} } } } },
    });
    expect(html).not.toContain('<script>');
    expect(html).toContain(`<section id="${ESCAPED}">`);
  });

  it("an e-mail template's html part escapes every placeholder", () => {
    expect(renderMailText('<a title="{{ v }}">{{ v }}</a>', { v: HOSTILE }, true, 'html')).toBe(
      `<a title="${ESCAPED}">${ESCAPED}</a>`,
    );
    expect(renderMailText('{{ v }}', { v: HOSTILE }, false, 'text')).toBe(HOSTILE);
  });
});
