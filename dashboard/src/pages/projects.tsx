// The tenant's projects: list, create, rename, delete (typed confirmation: the project's name).
import { useState } from 'react';
import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { Link, useLocation } from 'wouter';
import type { ProjectListed } from '@tessera/client';
import { platform } from '../lib/session.ts';
import { when } from '../lib/format.ts';
import {
  Button,
  Empty,
  ErrorBox,
  Loading,
  PageHeader,
  Section,
  TextField,
  useConfirm,
  useToast,
} from '../ui/index.tsx';

export default function Projects() {
  const queries = useQueryClient();
  const [, navigate] = useLocation();
  const [name, setName] = useState('');
  const list = useQuery({ queryKey: ['projects'], queryFn: () => platform.tenant.projects.list() });
  const create = useMutation({
    mutationFn: () => platform.tenant.projects.create(name.trim()),
    onSuccess: async (p) => {
      setName('');
      await queries.invalidateQueries({ queryKey: ['projects'] });
      navigate(`/p/${encodeURIComponent(p.id)}/settings`);
    },
  });
  return (
    <>
      <PageHeader title="Projects" description="Each project has its own database, users, files and functions." />
      <Section title="Create a project">
        <form
          className="row"
          onSubmit={(e) => {
            e.preventDefault();
            create.mutate();
          }}
        >
          <TextField
            label="Project name"
            required
            maxLength={100}
            value={name}
            onChange={(e) => setName(e.target.value)}
          />
          <Button type="submit" variant="primary" busy={create.isPending}>
            Create project
          </Button>
        </form>
        <ErrorBox error={create.error} title="Could not create the project" />
      </Section>
      <Section title="Your projects">
        {list.isPending ? (
          <Loading what="Loading projects" />
        ) : list.error ? (
          <ErrorBox error={list.error} />
        ) : list.data.length === 0 ? (
          <Empty title="No projects yet">
            Create your first project above: it gets its API keys, an OIDC client and a database of its own.
          </Empty>
        ) : (
          <div className="table-wrap">
            <table>
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Project id</th>
                  <th scope="col">Created</th>
                  <th scope="col">
                    <span className="sr-only-label">Actions</span>
                  </th>
                </tr>
              </thead>
              <tbody>
                {list.data.map((p) => (
                  <ProjectRow key={p.id} project={p} />
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Section>
    </>
  );
}

function ProjectRow({ project }: { project: ProjectListed }) {
  const queries = useQueryClient();
  const confirm = useConfirm();
  const toast = useToast();
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState(project.name);
  const rename = useMutation({
    mutationFn: () => platform.tenant.projects.rename(project.id, name.trim()),
    onSuccess: async () => {
      setEditing(false);
      toast('Project renamed');
      await queries.invalidateQueries({ queryKey: ['projects'] });
      await queries.invalidateQueries({ queryKey: ['project', project.id] });
    },
  });
  const remove = useMutation({
    mutationFn: () => platform.tenant.projects.remove(project.id),
    onSuccess: async () => {
      toast(`Project ${project.name} deleted`);
      await queries.invalidateQueries({ queryKey: ['projects'] });
    },
  });
  const askDelete = async () => {
    const ok = await confirm({
      title: `Delete ${project.name}?`,
      body: <p>This deletes the project's database, users, files, functions and keys. It cannot be undone.</p>,
      action: 'Delete project',
      typed: project.name,
    });
    if (ok) remove.mutate();
  };
  return (
    <tr>
      <td>
        {editing ? (
          <form
            className="row"
            onSubmit={(e) => {
              e.preventDefault();
              rename.mutate();
            }}
          >
            <TextField
              label="New name"
              required
              maxLength={100}
              value={name}
              onChange={(e) => setName(e.target.value)}
              autoFocus
            />
            <Button type="submit" variant="primary" busy={rename.isPending}>
              Save
            </Button>
            <Button
              onClick={() => {
                setEditing(false);
                setName(project.name);
              }}
            >
              Cancel
            </Button>
          </form>
        ) : (
          <Link href={`/p/${encodeURIComponent(project.id)}/settings`}>{project.name}</Link>
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
          <Button
            className="btn-small"
            variant="danger"
            busy={remove.isPending}
            onClick={() => void askDelete()}
            aria-label={`Delete ${project.name}`}
          >
            Delete
          </Button>
        </div>
      </td>
    </tr>
  );
}
