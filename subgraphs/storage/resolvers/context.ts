// The resolver context of the storage subgraph, and the guard of the API-key-only fields.
import { errors } from '../../../platform/errors.ts';
import type { SubgraphContext } from '../../../platform/subgraph.ts';
import type { StorageServices } from '../services/index.ts';
import { requireKey } from '../services/access.ts';
import { isUuid } from '../../../platform/ids.ts';

export type StorageContext = SubgraphContext<StorageServices>;

/** The project whose usage and limits may be read: the API key's own, or any for the router itself. */
export function projectForKeyOrInternal(ctx: StorageContext, projectId: string | null | undefined): string {
  const p = ctx.principal;
  if (p.kind === 'internal') {
    if (!isUuid(projectId)) throw errors.validation('projectId', 'is required');
    return projectId;
  }
  const own = requireKey(p, 'Storage usage').projectId;
  if (projectId && projectId !== own) throw errors.notFound('project', projectId.slice(0, 100));
  return own;
}
