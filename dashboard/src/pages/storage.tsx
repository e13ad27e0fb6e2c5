// Project storage: the folder tree, the files of a folder (upload by drag-and-drop or picker with progress,
// download, delete, details), the access policies and the usage against the quota.
import { useRef, useState, type DragEvent } from 'react';
import { useMutation, useQuery } from '@tanstack/react-query';
import type { StorageObject, TesseraClient } from '@tessera/client';
import { useProjectCtx } from '../lib/project-context.ts';
import { bytes, when } from '../lib/format.ts';
import {
  Area,
  Badge,
  Button,
  CheckGroup,
  CopyField,
  DataTable,
  DeleteButton,
  Empty,
  ErrorBox,
  Loading,
  RowForm,
  Section,
  SelectField,
  TextField,
} from '../ui/index.tsx';
import { FolderIcon, FolderOpenIcon } from '../ui/icons.tsx';
import { ListResourceSections, QueryView, useAction, useListResource } from '../ui/data.tsx';

export default function Storage() {
  const { base, project } = useProjectCtx();
  return (
    <Area
      title={`${project.name}: storage`}
      description="Files, in folders, with access policies."
      label="Storage"
      base={`${base}/storage`}
      tabs={[
        { path: 'files', label: 'Files', page: <Files /> },
        { path: 'policies', label: 'Policies', page: <Policies /> },
        { path: 'usage', label: 'Usage', page: <Usage /> },
      ]}
    />
  );
}

type TreeNode = { name: string; path: string; children: TreeNode[] };

/** The folder paths (`a/b`) as a tree. */
function treeOf(paths: string[]): TreeNode {
  const root: TreeNode = { name: '(top level)', path: '', children: [] };
  for (const p of paths) {
    let node = root;
    let acc = '';
    for (const part of p.split('/').filter(Boolean)) {
      acc = acc ? `${acc}/${part}` : part;
      let child = node.children.find((c) => c.path === acc);
      if (!child) {
        child = { name: part, path: acc, children: [] };
        node.children.push(child);
      }
      node = child;
    }
  }
  return root;
}

function Tree({ node, selected, onSelect }: { node: TreeNode; selected: string; onSelect: (p: string) => void }) {
  return (
    <li>
      <button
        type="button"
        className={`btn btn-ghost btn-small${selected === node.path ? ' active' : ''}`}
        aria-current={selected === node.path ? 'true' : undefined}
        onClick={() => onSelect(node.path)}
      >
        {selected === node.path ? <FolderOpenIcon /> : <FolderIcon />} {node.name}
      </button>
      {node.children.length > 0 && (
        <ul className="tree">
          {node.children
            .sort((a, b) => a.name.localeCompare(b.name))
            .map((c) => (
              <Tree key={c.path} node={c} selected={selected} onSelect={onSelect} />
            ))}
        </ul>
      )}
    </li>
  );
}

function Files() {
  const { api, project } = useProjectCtx();
  const [folder, setFolder] = useState('');
  const [newFolder, setNewFolder] = useState('');
  const [extraFolders, setExtraFolders] = useState<string[]>([]);
  const [progress, setProgress] = useState<{ name: string; sent: number; total: number } | null>(null);
  const [over, setOver] = useState(false);
  const [details, setDetails] = useState<StorageObject | null>(null);
  const input = useRef<HTMLInputElement>(null);
  const folders = useQuery({ queryKey: ['folders', project.id], queryFn: () => api.storage.folders({ first: 1000 }) });
  const objects = useQuery({
    queryKey: ['objects', project.id, folder],
    queryFn: () => api.storage.list({ folder, first: 200 }),
  });
  // What a changed file changes: the folder's files, the folder tree and the usage.
  const changed = [
    ['objects', project.id],
    ['folders', project.id],
    ['storage-usage', project.id],
  ];
  const upload = useAction({
    run: async (files: File[]) => {
      for (const f of files) {
        setProgress({ name: f.name, sent: 0, total: f.size });
        await api.storage.upload(f, {
          folder,
          confirm: true,
          upsert: true,
          onProgress: (sent, total) => setProgress({ name: f.name, sent, total: total ?? f.size }),
        });
      }
    },
    done: (_, files) => `${files.length} file(s) uploaded`,
    invalidate: changed,
    onSettled: () => setProgress(null),
  });
  const download = useMutation({
    mutationFn: async (o: StorageObject) => {
      const res = await api.storage.download(o.id);
      const url = URL.createObjectURL(await res.blob());
      const a = document.createElement('a');
      a.href = url;
      a.download = o.name;
      document.body.append(a);
      a.click();
      a.remove();
      window.setTimeout(() => URL.revokeObjectURL(url), 10_000);
    },
  });
  const remove = useAction({
    run: (o: StorageObject) => api.storage.remove(o.id),
    onSuccess: (_, o) => {
      if (details?.id === o.id) setDetails(null);
    },
    done: (_, o) => `${o.name} deleted`,
    invalidate: changed,
  });
  const paths = [...(folders.data?.folders ?? []).map((f) => f.folder), ...extraFolders];
  const drop = (e: DragEvent) => {
    e.preventDefault();
    setOver(false);
    const files = [...e.dataTransfer.files];
    if (files.length) upload.mutate(files);
  };
  const list = objects.data?.objects ?? [];
  return (
    <div className="split">
      <Section title="Folders">
        {folders.error ? (
          <ErrorBox error={folders.error} />
        ) : (
          <ul className="tree" aria-label="Folder tree">
            <Tree
              node={treeOf(paths)}
              selected={folder}
              onSelect={(p) => {
                setFolder(p);
                setDetails(null);
              }}
            />
          </ul>
        )}
        <RowForm
          submit="Add"
          onSubmit={() => {
            const p = [folder, newFolder.trim()].filter(Boolean).join('/');
            if (newFolder.trim()) {
              setExtraFolders([...extraFolders, p]);
              setFolder(p);
              setNewFolder('');
            }
          }}
        >
          <TextField
            label="New folder"
            hint="Inside the selected folder; it is kept once a file is in it."
            value={newFolder}
            onChange={(e) => setNewFolder(e.target.value)}
          />
        </RowForm>
      </Section>
      <div>
        <Section title={folder ? `Folder ${folder}` : 'Top level'}>
          <div
            className={`dropzone${over ? ' over' : ''}`}
            onDragOver={(e) => {
              e.preventDefault();
              setOver(true);
            }}
            onDragLeave={() => setOver(false)}
            onDrop={drop}
            data-testid="dropzone"
          >
            <p>Drop files here, or</p>
            <input
              ref={input}
              type="file"
              multiple
              id="file-picker"
              className="sr-only-label"
              tabIndex={-1}
              aria-label="Files to upload"
              onChange={(e) => {
                const files = [...(e.target.files ?? [])];
                if (files.length) upload.mutate(files);
                e.target.value = '';
              }}
            />
            <Button onClick={() => input.current?.click()} busy={upload.isPending}>
              Choose files to upload
            </Button>
            {progress && (
              <div role="status">
                <label htmlFor="upload-progress">
                  Uploading {progress.name}: {Math.round((progress.sent / Math.max(progress.total, 1)) * 100)}%
                </label>
                <progress id="upload-progress" max={progress.total || 1} value={progress.sent} />
              </div>
            )}
          </div>
          <ErrorBox error={upload.error ?? download.error ?? remove.error ?? objects.error} />
          {objects.isPending ? (
            <Loading what="Loading files" />
          ) : list.length === 0 ? (
            <Empty title="No files in this folder">
              Drop files on the area above or choose them; apps upload with POST /storage/api/v1/storage/upload.
            </Empty>
          ) : (
            <DataTable label="Files" columns={['Name', 'Size', 'Type', 'Status', 'Updated']} actions>
              {list.map((o) => (
                <tr key={o.id}>
                  <td>
                    <button type="button" className="btn btn-ghost btn-small" onClick={() => setDetails(o)}>
                      {o.name}
                    </button>
                  </td>
                  <td className="num">{bytes(o.size)}</td>
                  <td>{o.content_type}</td>
                  <td>
                    {o.status === 'ready' ? <Badge tone="good">ready</Badge> : <Badge tone="warn">{o.status}</Badge>}
                  </td>
                  <td>{when(o.updated_at)}</td>
                  <td>
                    <div className="actions">
                      <Button
                        className="btn-small"
                        aria-label={`Download ${o.name}`}
                        onClick={() => download.mutate(o)}
                      >
                        Download
                      </Button>
                      <DeleteButton
                        what={o.name}
                        body={<p>The file is removed for good.</p>}
                        action="Delete file"
                        onConfirm={() => remove.mutate(o)}
                      />
                    </div>
                  </td>
                </tr>
              ))}
            </DataTable>
          )}
        </Section>
        {details && (
          <Section
            title={`Details of ${details.name}`}
            actions={<Button onClick={() => setDetails(null)}>Close</Button>}
          >
            <dl className="props">
              <dt>Id</dt>
              <dd>
                <code>{details.id}</code>
              </dd>
              <dt>Path</dt>
              <dd>{details.path}</dd>
              <dt>Size</dt>
              <dd>
                {bytes(details.size)} ({details.size} bytes)
              </dd>
              <dt>Content type</dt>
              <dd>{details.content_type}</dd>
              <dt>SHA-256</dt>
              <dd>
                <code>{details.sha256 ?? '—'}</code>
              </dd>
              <dt>Owner</dt>
              <dd>{details.owner_id ?? 'the project (secret key)'}</dd>
              <dt>Created</dt>
              <dd>{when(details.created_at)}</dd>
              <dt>Updated</dt>
              <dd>{when(details.updated_at)}</dd>
            </dl>
            {details.download_url && <CopyField label="Download URL" value={details.download_url} />}
          </Section>
        )}
      </div>
    </div>
  );
}

const OPERATIONS = ['read', 'write', 'delete', 'list'] as const;

function Policies() {
  const { api, project } = useProjectCtx();
  const [name, setName] = useState('');
  const [folder, setFolder] = useState('');
  const [ops, setOps] = useState<string[]>(['read']);
  const [principal, setPrincipal] = useState('public');
  const [role, setRole] = useState('');
  const [types, setTypes] = useState('');
  const policies = useListResource({
    key: ['storage-policies', project.id],
    collection: api.storage.policies,
    input: () => ({
      name: name.trim(),
      folder: folder.trim(),
      operations: ops,
      principal: principal === 'role' ? `role:${role.trim()}` : principal,
      ...(types.trim()
        ? {
            content_types: types
              .split(',')
              .map((t) => t.trim())
              .filter(Boolean),
          }
        : {}),
    }),
    onCreated: () => setName(''),
    created: 'Policy created',
    deleted: 'Policy deleted',
  });
  return (
    <ListResourceSections
      resource={policies}
      title="Policies"
      intro={
        <p className="muted">
          The secret key reaches every file. Policies say what the publishable key and signed-in end-users may do, per
          folder.
        </p>
      }
      empty={
        <Empty title="No policies">
          Without a policy, only the secret key reaches files. Add one below to let apps read or upload.
        </Empty>
      }
      form={{ title: 'New policy', submit: 'Create policy', failed: 'Could not create the policy' }}
      onCreate={() => policies.create.mutate()}
      fields={
        <>
          <div className="row">
            <TextField label="Policy name" required value={name} onChange={(e) => setName(e.target.value)} />
            <TextField
              label="Folder"
              hint="With its subfolders; empty: every folder."
              value={folder}
              onChange={(e) => setFolder(e.target.value)}
            />
          </div>
          <CheckGroup legend="Operations" options={OPERATIONS} value={ops} onChange={setOps} />
          <div className="row">
            <SelectField
              label="Who"
              value={principal}
              onChange={(e) => setPrincipal(e.target.value)}
              options={[
                { value: 'public', label: 'Anyone (public)' },
                { value: 'authenticated', label: 'Signed-in users' },
                { value: 'owner', label: 'The file’s owner' },
                { value: 'role', label: 'Users with a role' },
              ]}
            />
            {principal === 'role' && (
              <TextField label="Role name" required value={role} onChange={(e) => setRole(e.target.value)} />
            )}
            <TextField
              label="Allowed content types (write)"
              hint="Comma-separated, e.g. image/*; empty allows any."
              value={types}
              onChange={(e) => setTypes(e.target.value)}
            />
          </div>
        </>
      }
    >
      {(list) => (
        <DataTable columns={['Name', 'Folder', 'Operations', 'Who']} actions>
          {list.map((p) => (
            <tr key={p.id}>
              <td>{p.name}</td>
              <td>{p.folder || '(every folder)'}</td>
              <td>{p.operations.join(', ')}</td>
              <td>{p.principal}</td>
              <td>
                <DeleteButton
                  what={`policy ${p.name}`}
                  body={<p>What it allowed is refused from now on.</p>}
                  action="Delete policy"
                  onConfirm={() => policies.remove.mutate(p.id)}
                />
              </td>
            </tr>
          ))}
        </DataTable>
      )}
    </ListResourceSections>
  );
}

function Usage() {
  const { api, project } = useProjectCtx();
  const usage = useQuery({ queryKey: ['storage-usage', project.id], queryFn: () => api.storage.usage() });
  return <QueryView query={usage}>{(u) => <UsageFigures u={u} />}</QueryView>;
}

function UsageFigures({ u }: { u: Awaited<ReturnType<TesseraClient['storage']['usage']>> }) {
  const pct = u.quota_bytes ? Math.min(100, (u.bytes / u.quota_bytes) * 100) : undefined;
  return (
    <Section title="Usage">
      <dl className="props">
        <dt>Files</dt>
        <dd>
          {u.objects.toLocaleString()} ({bytes(u.bytes)})
        </dd>
        <dt>Uploads in progress</dt>
        <dd>
          {u.pending_objects} ({bytes(u.pending_bytes)})
        </dd>
        <dt>Quota</dt>
        <dd>{u.quota_bytes ? bytes(u.quota_bytes) : 'none'}</dd>
        <dt>Left</dt>
        <dd>{u.remaining_bytes === null ? '—' : bytes(u.remaining_bytes)}</dd>
        <dt>Largest upload</dt>
        <dd>{bytes(u.max_upload_bytes)}</dd>
      </dl>
      {pct !== undefined && (
        <>
          <label htmlFor="quota-bar">{pct.toFixed(1)}% of the quota used</label>
          <progress id="quota-bar" max={100} value={pct} />
        </>
      )}
    </Section>
  );
}
