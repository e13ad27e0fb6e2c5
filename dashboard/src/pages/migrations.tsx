// The project's migrations (the same endpoints as `tessera migration list` and `tessera db push`): what was applied,
// with checksums; applying one written here (one all-or-nothing script as the project's role, recorded with its
// checksum); and the schema as SQL (what `tessera db dump --schema` writes), to read, copy or download.
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { useProjectCtx } from '../lib/project-context.ts';
import {
  Button,
  CodeArea,
  CopyButton,
  DataTable,
  Empty,
  ErrorBox,
  FormSection,
  Loading,
  Section,
  TextField,
} from '../ui/index.tsx';
import { ListSection, useAction } from '../ui/data.tsx';

/** The UTC time as a migration version: YYYYMMDDHHMMSS (what `tessera migration new` names files by). */
const versionNow = (): string => new Date().toISOString().replace(/[-:T]/g, '').slice(0, 14);

/** A version later than every applied one (two applied within one second still differ and keep their order). */
const nextVersion = (applied: { version: string }[]): string => {
  const now = versionNow();
  const last = applied.at(-1)?.version;
  return last && last.length === now.length && last >= now ? String(BigInt(last) + 1n) : now;
};

/** A name as the CLI writes it: lower case, words joined by `_`. */
const slug = (name: string): string =>
  name
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');

export default function Migrations() {
  const { api, project } = useProjectCtx();
  const key = ['migrations', project.id];
  const list = useQuery({ queryKey: key, queryFn: () => api.data.migrations() });
  const [name, setName] = useState('');
  const [sql, setSql] = useState('');
  const apply = useAction({
    run: (m: { version: string; name: string; sql: string }) => api.data.applyMigration(m),
    onSuccess: () => {
      setName('');
      setSql('');
    },
    done: (r) =>
      r.applied
        ? `Applied ${r.migration.version}_${r.migration.name}`
        : `${r.migration.version}_${r.migration.name} was applied already`,
    invalidate: [key, ['tables', project.id], ['schema-sql', project.id]],
  });
  return (
    <>
      <ListSection
        title="Applied migrations"
        query={list}
        loading="Loading migrations"
        intro={
          <p className="muted">
            Recorded in <code>tessera_migrations</code>, a table of the project's own schema, by{' '}
            <code>tessera db push</code> and by the form below. An applied migration never changes: write a new one.
          </p>
        }
        empty={
          <Empty title="No migration applied yet">
            <code>tessera migration new create_posts</code>, write SQL in the file, then <code>tessera db push</code>;
            or apply one below.
          </Empty>
        }
      >
        {(rows) => (
          <DataTable label="Applied migrations" columns={['Version', 'Name', 'Checksum (sha256)', 'Applied at']}>
            {rows.map((m) => (
              <tr key={m.version}>
                <td className="code">{m.version}</td>
                <td>{m.name}</td>
                <td className="code" title={m.checksum}>
                  {m.checksum.slice(0, 12)}…
                </td>
                <td>{new Date(m.appliedAt).toLocaleString()}</td>
              </tr>
            ))}
          </DataTable>
        )}
      </ListSection>
      <FormSection
        title="Apply a migration"
        intro={
          <p className="muted">
            The SQL runs as one script in a transaction of its own, as the project's role: all of it or nothing.
          </p>
        }
        submit="Apply migration"
        action={apply}
        failed="The migration failed: nothing of it was kept"
        onSubmit={() => apply.mutate({ version: nextVersion(list.data ?? []), name: slug(name), sql })}
      >
        <TextField
          label="Name"
          value={name}
          required
          placeholder="create_posts"
          onChange={(e) => setName(e.target.value)}
          hint={name.trim() ? `Recorded as <version>_${slug(name)}` : 'Letters, digits and _'}
        />
        <CodeArea
          label="SQL"
          value={sql}
          required
          rows={8}
          placeholder="create table posts (id serial primary key, title text not null);"
          onChange={(e) => setSql(e.target.value)}
        />
      </FormSection>
      <SchemaSql />
    </>
  );
}

/** The schema as SQL, loaded on demand (it reads the whole catalog). */
function SchemaSql() {
  const { api, project } = useProjectCtx();
  const [shown, setShown] = useState(false);
  const schema = useQuery({
    queryKey: ['schema-sql', project.id],
    queryFn: () => api.data.schemaSql(),
    enabled: shown,
  });
  const download = (text: string) => {
    const url = URL.createObjectURL(new Blob([text], { type: 'text/plain' }));
    const a = document.createElement('a');
    a.href = url;
    a.download = `schema-${versionNow()}.sql`;
    a.click();
    URL.revokeObjectURL(url);
  };
  return (
    <Section
      title="Schema as SQL"
      actions={
        schema.data ? (
          <>
            <CopyButton value={schema.data} label="Copy SQL" />
            <Button onClick={() => download(schema.data)}>Download</Button>
          </>
        ) : undefined
      }
    >
      <p className="muted">
        Tables, constraints, indexes, views, functions, triggers and policies: run on a fresh project, it makes the same
        schema (<code>tessera db dump --schema</code>, <code>tessera db pull</code>).
      </p>
      {!shown ? (
        <Button onClick={() => setShown(true)}>Show the schema as SQL</Button>
      ) : schema.isPending ? (
        <Loading what="Reading the schema" />
      ) : schema.error ? (
        <ErrorBox error={schema.error} title="The schema could not be read" />
      ) : (
        <pre aria-label="Schema SQL" className="code" tabIndex={0}>
          {schema.data}
        </pre>
      )}
    </Section>
  );
}
