// The API documents clients are built from: /openapi.json passes Redocly's linter (recommended rules), documents
// every route of the table with every error status it can give, carries the package's version, and the client
// package's generated types are what the document gives today.
import fs from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import { lintOpenApi, spectralLint } from '../../scripts/openapi-lint.ts';
import { openApiDocument } from '../../scripts/openapi.ts';
import { CLIENT_TYPES_FILE, clientTypes } from '../../scripts/client-types.ts';
import { ROUTE_TABLE } from '../../rest-compat/route-table.ts';
import { errorStatusesOf } from '../../rest-compat/openapi.ts';
import { VERSION } from '../../packages/client/src/index.ts';

type Doc = {
  info: { version: string };
  paths: Record<string, Record<string, { responses: Record<string, unknown> }>>;
  components: { responses: Record<string, unknown> };
};
const doc = openApiDocument() as unknown as Doc;

describe('the OpenAPI document', () => {
  it('passes the Redocly linter with its recommended rules (redocly.yaml)', async () => {
    const problems = await lintOpenApi(doc as unknown as Record<string, unknown>);
    expect(problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`)).toEqual([]);
  }, 60_000);

  it("passes Spectral's spectral:oas rules (.spectral.yaml) with no warning", () => {
    const r = spectralLint(doc as unknown as Record<string, unknown>);
    expect({ ok: r.ok, report: r.ok ? '' : r.report }).toEqual({ ok: true, report: '' });
  }, 60_000);

  it('defines every tag it uses, with a description, and describes every operation', () => {
    const tags = (doc as unknown as { tags: { name: string; description: string }[] }).tags;
    const used = new Set<string>();
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item) as unknown as {
        tags?: string[];
        description?: string;
        operationId: string;
      }[]) {
        op.tags?.forEach((t) => used.add(t));
        expect([op.operationId, (op.description ?? '').length > 0]).toEqual([op.operationId, true]);
      }
    expect(tags.map((t) => t.name).sort()).toEqual([...used].sort());
    for (const t of tags) expect(t.description.length).toBeGreaterThan(10);
  });

  it('documents the data API at /v1/<action> only, and the 202 of an async invoke', () => {
    const paths = Object.keys(doc.paths);
    expect(paths.filter((p) => p.startsWith('/api/v1/'))).toEqual([]);
    expect(paths).toContain('/v1/find');
    expect(doc.paths['/edge/api/v1/invoke/{name}']!.post!.responses).toHaveProperty('202');
  });

  it('documents every route of the table with its success and every error status it can give', () => {
    for (const row of ROUTE_TABLE) {
      const op = doc.paths[row.path.replace(/:([A-Za-z_]+)/g, '{$1}')]?.[row.method.toLowerCase()];
      expect([row.id, op !== undefined]).toEqual([row.id, true]);
      const statuses = Object.keys(op!.responses);
      expect(statuses).toContain(String(row.status));
      for (const s of errorStatusesOf(row)) expect(statuses).toContain(String(s));
    }
    for (const s of [409, 413, 415, 422, 429, 502]) expect(doc.components.responses).toHaveProperty(`E${s}`);
    const invoke = doc.paths['/edge/api/v1/invoke/{name}']!.post!.responses;
    for (const s of ['409', '413', '415', '422', '429', '502', '504']) expect(invoke).toHaveProperty(s);
  });

  it("carries the package's version, which the client package shares", () => {
    const root = JSON.parse(fs.readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
      version: string;
    };
    const client = JSON.parse(
      fs.readFileSync(new URL('../../packages/client/package.json', import.meta.url), 'utf8'),
    ) as { version: string };
    expect(doc.info.version).toBe(root.version);
    expect(client.version).toBe(root.version);
    expect(VERSION).toBe(root.version);
  });

  it('is what the client package was generated from (npm run client:types)', async () => {
    expect(fs.readFileSync(CLIENT_TYPES_FILE, 'utf8') === (await clientTypes())).toBe(true);
  }, 60_000);
});
