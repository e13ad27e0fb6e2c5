// REST rows of storage (`/storage/api/v1/storage`): every JSON row of the seed's Storage table. The byte
// paths (upload, download) are hand-written handlers in ../handlers/storage.ts. Rows that end-users and
// anonymous callers may reach (by policy) are `auth: 'optional'`: public, and a credential sent (checked, 401 when bad)
// decides with the policies what the caller may do (the storage subgraph decides).
import type { RouteRow } from '../route-types.ts';
// The object's REST shape, shared with the upload handler's operation (platform/internal-operations.ts).
import { STORAGE_OBJECT_REST as STORAGE_OBJECT } from '../../platform/internal-operations.ts';

const TAG = 'Storage';
const BASE = '/storage/api/v1/storage';
const FOLDER = 'folder objects bytes';
const POLICY = 'id name folder operations principal content_types: contentTypes created_at: createdAt';

export const storageRoutes: RouteRow[] = [
  {
    id: 'storage.upload.confirm',
    method: 'POST',
    path: `${BASE}/upload/confirm`,
    summary: 'Confirm an upload',
    description:
      'Body `{id}`. The pending object becomes `ready` (listed, downloadable). Confirming a ready object answers it unchanged. Needs `write` on its folder.',
    tag: TAG,
    auth: 'optional',
    operation: `mutation StorageUploadConfirm($id: ID!) { object: confirmStorageUpload(id: $id) { ${STORAGE_OBJECT} } }`,
    status: 200,
    variables: { id: 'body.id' },
  },
  {
    id: 'storage.object.list',
    method: 'GET',
    path: `${BASE}/objects`,
    summary: 'List objects',
    description:
      'Query: `folder` (only objects directly in it; `recursive=true` adds subfolders), `prefix` (name prefix), `sort` (`name`, `created_at`, `updated_at`, `size`; `-` for descending), `first` (1-1000, default 100), `after` (`next_cursor`), `status=pending` (API key only), `project_id` (anonymous callers). Needs `list`; callers limited by policies see only what the policies cover.',
    tag: TAG,
    auth: 'optional',
    operation: `query StorageObjectList($projectId: ID, $folder: String, $recursive: Boolean, $prefix: String, $status: String, $sort: String, $first: Int, $after: String) {
      storageObjects(projectId: $projectId, folder: $folder, recursive: $recursive, prefix: $prefix, status: $status, sort: $sort, first: $first, after: $after) {
        objects: items { ${STORAGE_OBJECT} } next_cursor: nextCursor
      }
    }`,
    status: 200,
    variables: {
      projectId: 'query.project_id',
      folder: 'query.folder',
      recursive: 'query.recursive',
      prefix: 'query.prefix',
      status: 'query.status',
      sort: 'query.sort',
      first: 'query.first',
      after: 'query.after',
    },
    unwrap: true,
  },
  {
    id: 'storage.object.get',
    method: 'GET',
    path: `${BASE}/objects/:id`,
    summary: "An object's metadata",
    description: 'Needs `read` on its folder.',
    tag: TAG,
    auth: 'optional',
    operation: `query StorageObjectGet($id: ID!) { object: storageObject(id: $id) { ${STORAGE_OBJECT} } }`,
    status: 200,
    variables: { id: 'params.id' },
  },
  {
    id: 'storage.object.delete',
    method: 'DELETE',
    path: `${BASE}/objects/:id`,
    summary: 'Delete a file',
    description: 'Removes the object and its bytes. Deleting it again answers 404. Needs `delete` on its folder.',
    tag: TAG,
    auth: 'optional',
    operation: 'mutation StorageObjectDelete($id: ID!) { deleteStorageObject(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  },
  {
    id: 'storage.folder.list',
    method: 'GET',
    path: `${BASE}/folders`,
    summary: 'List folders',
    description:
      'Folders holding ready objects, by name, with the count and bytes of the objects directly in each. Query: `prefix`, `first`, `after`, `project_id` (anonymous callers). Needs `list`.',
    tag: TAG,
    auth: 'optional',
    operation: `query StorageFolderList($projectId: ID, $prefix: String, $first: Int, $after: String) {
      storageFolders(projectId: $projectId, prefix: $prefix, first: $first, after: $after) { folders: items { ${FOLDER} } next_cursor: nextCursor }
    }`,
    status: 200,
    variables: { projectId: 'query.project_id', prefix: 'query.prefix', first: 'query.first', after: 'query.after' },
    unwrap: true,
  },
  {
    id: 'storage.usage.get',
    method: 'GET',
    path: `${BASE}/usage`,
    summary: 'Storage usage statistics',
    description:
      "Objects and bytes (ready and pending), per folder, against the plan's quota. Needs the project API key.",
    tag: TAG,
    auth: 'project',
    operation: `query StorageUsage { storageProject {
      usage: storageUsage {
        objects bytes pending_objects: pendingObjects pending_bytes: pendingBytes quota_bytes: quotaBytes remaining_bytes: remainingBytes
        max_upload_bytes: maxUploadBytes folders { ${FOLDER} }
      }
    } }`,
    status: 200,
    variables: {},
    unwrap: true,
  },
  {
    id: 'storage.policy.list',
    method: 'GET',
    path: `${BASE}/policies`,
    summary: 'List ACL policies',
    description: 'Oldest first; query `first` and `after`. Needs the project API key.',
    tag: TAG,
    auth: 'project',
    operation: `query StoragePolicyList($first: Int, $after: String) { storagePolicies(first: $first, after: $after) { policies: items { ${POLICY} } next_cursor: nextCursor } }`,
    status: 200,
    variables: { first: 'query.first', after: 'query.after' },
    unwrap: true,
  },
  {
    id: 'storage.policy.create',
    method: 'POST',
    path: `${BASE}/policies`,
    summary: 'Create an ACL policy',
    description:
      'Body `{name, folder, operations: ["read"|"write"|"delete"|"list"], principal: "public"|"authenticated"|"owner"|"role:<name>", content_types?}`. The policy covers the folder and its subfolders (`""`: all). Needs the project API key.',
    tag: TAG,
    auth: 'project',
    operation: `mutation StoragePolicyCreate($input: StoragePolicyInput!) { policy: createStoragePolicy(input: $input) { ${POLICY} } }`,
    status: 201,
    variables: { input: 'body' },
  },
  {
    id: 'storage.policy.delete',
    method: 'DELETE',
    path: `${BASE}/policies`,
    summary: 'Delete an ACL policy',
    description: 'The id as `?id=` or in the JSON body `{id}`. Needs the project API key.',
    tag: TAG,
    auth: 'project',
    operation: 'mutation StoragePolicyDelete($id: ID!) { deleteStoragePolicy(id: $id) }',
    status: 204,
    variables: { id: 'query.id|body.id' },
  },
  {
    id: 'storage.policy.deleteById',
    method: 'DELETE',
    path: `${BASE}/policies/:id`,
    summary: 'Delete an ACL policy (id in the path)',
    tag: TAG,
    auth: 'project',
    operation: 'mutation StoragePolicyDeleteById($id: ID!) { deleteStoragePolicy(id: $id) }',
    status: 204,
    variables: { id: 'params.id' },
  },
];
