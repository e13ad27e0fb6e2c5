// The tenant's projects: list, create, rename, delete (typed confirmation: the project's name).
import { useState } from 'react';
import { useQuery } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import type { ProjectListed } from '@tessera/client';
import { platform } from '../lib/session.ts';
import { when } from '../lib/format.ts';
import {
  Badge,
  Button,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  FormSection,
  PageHeader,
  RowForm,
  TextField,
} from '../ui/index.tsx';
import { ListSection, useAction } from '../ui/data.tsx';

export default function Projects() {
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const list = useQuery({ queryKey: ['projects'], queryFn: () => platform.tenant.projects.list() });
  const create = useAction({
    run: () => platform.tenant.projects.create(name.trim()),
    onSuccess: () => setName(''),
    invalidate: [['projects']],
    then: (p) => navigate(`/p/${encodeURIComponent(p.id)}/settings`),
  });
  return (
    <>
      <PageHeader title="Projects" description="Each project has its own database, users, files and functions." />
      <FormSection
        title="Create a project"
        submit="Create project"
        action={create}
        failed="Could not create the project"
        className="row"
        onSubmit={() => create.mutate()}
      >
        <NameField label="Project name" value={name} onChange={setName} />
      </FormSection>
      <ListSection
        title="Your projects"
        query={list}
        loading="Loading projects"
        empty={
          <Empty title="No projects yet">
            Create your first project above: it gets its API keys, an OIDC client and a database of its own.
          </Empty>
        }
      >
        {(projects) => (
          <DataTable columns={['Name', 'Project id', 'Created']} actions>
            {projects.map((p) => (
              <ProjectRow key={p.id} project={p} />
            ))}
          </DataTable>
        )}
      </ListSection>
    </>
  );
}

/** A project's name (at most 100 characters). */
function NameField({
  label,
  value,
  onChange,
  autoFocus,
}: {
  label: string;
  value: string;
  onChange: (value: string) => void;
  autoFocus?: boolean;
}) {
  return (
    <TextField
      label={label}
      required
      maxLength={100}
      value={value}
      onChange={(e) => onChange(e.target.value)}
      autoFocus={autoFocus}
    />
  );
}

function ProjectRow({ project }: { project: ProjectListed }) {
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(project.name);
  const rename = useAction({
    run: () => platform.tenant.projects.rename(project.id, name.trim()),
    onSuccess: () => setEditing(false),
    done: 'Project renamed',
    invalidate: [['projects'], ['project', project.id]],
  });
  const remove = useAction({
    run: () => platform.tenant.projects.remove(project.id),
    done: `Project ${project.name} deleted`,
    invalidate: [['projects']],
  });
  return (
    <tr>
      <td>
        {editing ? (
          <RowForm
            submit="Save"
            variant="primary"
            busy={rename.isPending}
            onSubmit={() => rename.mutate()}
            also={
              <Button
                onClick={() => {
                  setEditing(false);
                  setName(project.name);
                }}
              >
                Cancel
              </Button>
            }
          >
            <NameField label="New name" value={name} onChange={setName} autoFocus />
          </RowForm>
        ) : (
          <Link href={`/p/${encodeURIComponent(project.id)}/settings`}>{project.name}</Link>
        )}
        {project.suspended_at && (
          <>
            {' '}
            <Badge tone="bad">suspended by the operator</Badge>
          </>
        )}
        <ErrorBox error={rename.error ?? remove.error} />
      </td>
      <td>
        <code>{project.id}</code>
      </td>
      <td>{when(project.created_at)}</td>
      <td>
        <div className="actions">
          {!editing && (
            <Button className="btn-small" onClick={() => setEditing(true)} aria-label={`Rename ${project.name}`}>
              Rename
            </Button>
          )}
          <DeleteButton
            what={project.name}
            busy={remove.isPending}
            body={<p>This deletes the project's database, users, files, functions and keys. It cannot be undone.</p>}
            action="Delete project"
            typed={project.name}
            onConfirm={() => remove.mutate()}
          />
        </div>
      </td>
    </tr>
  );
}
