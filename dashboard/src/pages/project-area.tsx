// A project's pages: /p/<id>/settings, /auth, /database, /storage, /functions, /requests, /branding. The project and its client are
// loaded once here and handed down.
import { lazy, Suspense } from 'react';
import { Route, Switch, useLocation, Redirect } from 'wouter';
import { projectOf } from '../lib/routes.ts';
import { useProject } from '../lib/project.ts';
import { ProjectContext } from '../lib/project-context.ts';
import { ErrorBox, Loading } from '../ui/index.tsx';

/** A project's areas: the address under the project's and the page (loaded when the area is first opened). */
const AREAS = [
  ['settings', lazy(() => import('./settings.tsx'))],
  ['auth', lazy(() => import('./users.tsx'))],
  ['database', lazy(() => import('./database.tsx'))],
  ['storage', lazy(() => import('./storage.tsx'))],
  ['functions', lazy(() => import('./functions.tsx'))],
  ['requests', lazy(() => import('./requests.tsx'))],
  ['branding', lazy(() => import('./branding.tsx'))],
] as const;

export default function ProjectArea() {
  const [location] = useLocation();
  const id = projectOf(location)!.id;
  const { project, api, error, isPending } = useProject(id);
  if (isPending) return <Loading what="Loading the project" />;
  if (error || !project || !api)
    return <ErrorBox error={error ?? new Error('Project not found')} title="Could not open this project" />;
  const base = `/p/${encodeURIComponent(project.id)}`;
  return (
    <ProjectContext.Provider value={{ project, api, base }}>
      {project.suspended_at && (
        // Every call for the project answers 403 PROJECT_SUSPENDED: say why once, above whatever the page shows.
        <div className="error-box suspended" role="alert">
          <strong>This project is suspended by the operator</strong>
          <p className="error-message">
            Every call for it is refused (PROJECT_SUSPENDED) until the operator of this install resumes it; its data is
            kept.{project.suspended_reason ? ` Reason: ${project.suspended_reason}` : ''}
          </p>
        </div>
      )}
      <Suspense fallback={<Loading />}>
        <Switch>
          {AREAS.map(([path, Page]) => (
            <Route key={path} path={`${base}/${path}/*?`}>
              <Page />
            </Route>
          ))}
          <Route>
            <Redirect to={`${base}/settings`} replace />
          </Route>
        </Switch>
      </Suspense>
    </ProjectContext.Provider>
  );
}
