// The project whose pages are open: its record and the client acting for it.
import { createContext, useContext } from 'react';
import type { Project, TesseraClient } from '@tessera/client';

export type ProjectCtx = { project: Project; api: TesseraClient; base: string };

export const ProjectContext = createContext<ProjectCtx | null>(null);

/** The open project (inside a project's pages only). */
export function useProjectCtx(): ProjectCtx {
  const ctx = useContext(ProjectContext);
  if (!ctx) throw new Error('useProjectCtx outside a project page');
  return ctx;
}
