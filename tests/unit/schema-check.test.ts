import fs from 'node:fs';
import { describe, it, expect } from '@jest/globals';
import { checkSchema } from '../../router/schema-check.ts';
import { SUPERGRAPH_FILE } from '../../router/compose.ts';

const committed = fs.readFileSync(SUPERGRAPH_FILE, 'utf8');

describe('npm run schema:check', () => {
  it('passes on the committed supergraph', () => {
    const r = checkSchema({ previous: committed });
    expect(r.messages).toContain('schema check passed');
    expect(r.ok).toBe(true);
  });

  it('fails when a subgraph changes incompatibly (a field removed), naming the change', () => {
    const r = checkSchema({
      previous: committed,
      current: committed,
      readSdl: (e) => {
        const sdl = fs.readFileSync(e.schemaFile, 'utf8');
        return e.name === 'data' ? sdl.replace(/^\s*"[^"\n]*"\n\s*dataApiUrl: String!\n/m, '\n') : sdl;
      },
    });
    expect(r.ok).toBe(false);
    expect(r.messages.join('\n')).toMatch(/breaking change \(FIELD_REMOVED\): Project\.dataApiUrl was removed/);
    expect(r.messages.join('\n')).toMatch(/out of date/);
  });

  it('accepts the same change when it is listed as intended', () => {
    const readSdl = (e: { name: string; schemaFile: string }) => {
      const sdl = fs.readFileSync(e.schemaFile, 'utf8');
      return e.name === 'data' ? sdl.replace(/^\s*"[^"\n]*"\n\s*dataApiUrl: String!\n/m, '\n') : sdl;
    };
    const r = checkSchema({ previous: committed, readSdl, allowlist: ['Project.dataApiUrl was removed.'] });
    expect(r.messages.join('\n')).toMatch(/allowed breaking change: Project\.dataApiUrl was removed/);
    expect(r.messages.join('\n')).not.toMatch(/^breaking change/m);
  });

  it('fails when composition fails', () => {
    const r = checkSchema({
      readSdl: (e) =>
        e.name === 'storage' ? 'type Project @key(fields: "nope") { id: ID! }' : fs.readFileSync(e.schemaFile, 'utf8'),
    });
    expect(r.ok).toBe(false);
    expect(r.messages[0]).toMatch(/Composition failed/);
  });
});
