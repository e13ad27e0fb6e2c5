// A human-readable page of the REST API, rendered on the server from the OpenAPI document
// (no scripts, no CDN: it works offline and without JavaScript).
import escapeHtml from 'escape-html';

type Json = Record<string, unknown>;

const esc = (s: unknown): string => escapeHtml(String(s));

/** An example value for a JSON schema (for request bodies in curl examples). */
function example(schema: Json | undefined, depth = 0): unknown {
  if (!schema || depth > 4) return null;
  if (schema.anyOf) return example((schema.anyOf as Json[])[0], depth);
  if (schema.enum) return (schema.enum as unknown[])[0];
  switch (schema.type) {
    case 'object': {
      const props = (schema.properties ?? {}) as Record<string, Json>;
      const required = new Set((schema.required ?? Object.keys(props)) as string[]);
      return Object.fromEntries(
        Object.entries(props)
          .filter(([k]) => required.has(k))
          .map(([k, v]) => [k, example(v, depth + 1)]),
      );
    }
    case 'array':
      return [example(schema.items as Json, depth + 1)];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    case 'string':
      return schema.format === 'date-time' ? '2026-01-01T00:00:00Z' : 'string';
    default:
      return {};
  }
}

/** Renders the docs page for an OpenAPI document. */
export function renderDocsPage(openapi: Json): string {
  const paths = openapi.paths as Record<string, Record<string, Json>>;
  const byTag = new Map<string, string[]>();
  for (const [path, ops] of Object.entries(paths)) {
    for (const [method, op] of Object.entries(ops)) {
      const tag = ((op.tags as string[]) ?? ['Other'])[0]!;
      const security = (op.security as Json[]) ?? [];
      const auth =
        security.length === 0
          ? ''
          : 'bearerAuth' in (security[0] ?? {})
            ? ' -H "Authorization: Bearer $ACCESS_TOKEN"'
            : ' -H "X-Api-Key: $API_KEY"';
      const body = (op.requestBody as Json | undefined)?.content as Record<string, { schema: Json }> | undefined;
      const form = body?.['application/x-www-form-urlencoded']?.schema.properties as Json | undefined;
      const sample = body?.['application/json']
        ? ` -H 'content-type: application/json' -d '${JSON.stringify(example(body['application/json'].schema))}'`
        : form
          ? Object.keys(form)
              .map((k) => ` -d '${k}=...'`)
              .join('')
          : '';
      const curl = `curl -X ${method.toUpperCase()} "$BASE_URL${path.replace(/\{(\w+)\}/g, ':$1')}"${auth}${sample}`;
      const statuses = Object.keys(op.responses as Json).join(', ');
      const html = `<section id="${esc(op.operationId)}"><h3><span class="m ${esc(method)}">${esc(method.toUpperCase())}</span> <code>${esc(path)}</code></h3>
<p>${esc(op.summary)}${security.length === 0 ? ' <em>(no credentials)</em>' : ''}</p><p class="small">operation <code>${esc(op.operationId)}</code> · statuses ${esc(statuses)}</p>
<pre>${esc(curl)}</pre><details><summary>GraphQL operation</summary><pre>${esc(op['x-graphql-operation'])}</pre></details></section>`;
      byTag.set(tag, [...(byTag.get(tag) ?? []), html]);
    }
  }
  const toc = [...byTag.keys()].map((t) => `<li><a href="#tag-${esc(t)}">${esc(t)}</a></li>`).join('');
  const sections = [...byTag.entries()]
    .map(([t, items]) => `<h2 id="tag-${esc(t)}">${esc(t)}</h2>${items.join('\n')}`)
    .join('\n');
  const info = openapi.info as Json;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${esc(info.title)} API</title>
<style>body{font-family:system-ui,sans-serif;max-width:960px;margin:2rem auto;padding:0 1rem;color:#222}pre{background:#f4f4f4;padding:.6rem;overflow-x:auto}
.m{display:inline-block;min-width:4.5rem;text-align:center;border-radius:4px;color:#fff;font-size:.8em;padding:.1rem .3rem}.get{background:#2f7d32}.post{background:#1565c0}.put{background:#ef6c00}.delete{background:#c62828}.patch{background:#6a1b9a}.small{color:#666;font-size:.85em}</style>
</head><body><h1>${esc(info.title)} REST API</h1><p>${esc(info.description)}</p>
<p>Machine-readable: <a href="/openapi.json">/openapi.json</a> (OpenAPI 3.1). GraphQL: <code>/graphql</code>. Errors: <code>{"error": {"code", "message", "details", "request_id"}}</code>.</p>
<ul>${toc}</ul>${sections}</body></html>`;
}
