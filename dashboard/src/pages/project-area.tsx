// A project's pages: /p/<id>/settings, /auth, /database, /storage, /functions. The project and its client are
// loaded once here and handed down.
import { lazy, Suspense } from 'react';
import { Route, Switch, useLocation, Redirect } from 'wouter';
import { projectOf } from '../lib/routes.ts';
import { useProject } from '../lib/project.ts';
import { ProjectContext } from '../lib/project-context.ts';
import { ErrorBox, Loading } from '../ui/index.tsx';

const Settings = lazy(() => import('./settings.tsx'));
const Users = lazy(() => import('./users.tsx'));
const Database = lazy(() => import('./database.tsx'));
const Storage = lazy(() => import('./storage.tsx'));
const Functions = lazy(() => import('./functions.tsx'));

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
      <Suspense fallback={<Loading />}>
        <Switch>
          <Route path={`${base}/settings/*?`}>
            <Settings />
          </Route>
          <Route path={`${base}/auth/*?`}>
            <Users />
          </Route>
          <Route path={`${base}/database/*?`}>
            <Database />
          </Route>
          <Route path={`${base}/storage/*?`}>
            <Storage />
          </Route>
          <Route path={`${base}/functions/*?`}>
            <Functions />
          </Route>
          <Route>
            <Redirect to={`${base}/settings`} replace />
          </Route>
        </Switch>
      </Suspense>
    </ProjectContext.Provider>
  );
}
