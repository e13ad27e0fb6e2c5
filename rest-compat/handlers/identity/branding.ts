// The branding of a project's hosted end-user pages, asked of tenant management for every page (one primary-key read;
// never cached, so a change shows on the next page).
import type { FastifyRequest } from 'fastify';
import { INTERNAL_OPERATIONS, type ProjectBrandingFacts } from '../../../platform/internal-operations.ts';
import type { RawHandlerDeps } from '../types.ts';
import { callOAuth } from './oauth.ts';

/** The project's branding; undefined when the project is gone (the page is then shown unbranded). */
export async function brandingOf(
  deps: RawHandlerDeps,
  req: FastifyRequest,
  projectId: string,
): Promise<ProjectBrandingFacts | undefined> {
  return (await callOAuth(deps, req, INTERNAL_OPERATIONS.projectBranding, { projectId }))._projectBranding ?? undefined;
}
