// How the pages read and change data, one way each: a query shown through its states (loading, error, empty, data),
// an action (a mutation) that says it is done, refreshes what it changed and then moves on, a list with its create
// and delete actions, and cursor paging.
import { useState, type ReactNode } from 'react';
import { useMutation, useQuery, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { ErrorBox, FormSection, Loading, Pager, Section, useToast } from './index.tsx';

/** What QueryView needs of a query (a react-query result). */
type QueryState<T> = { isPending: boolean; error: unknown; data: T | undefined };

type QueryViewProps<T> = {
  query: QueryState<T>;
  /** What is loading ("Loading functions"). */
  loading?: string;
  /** The error box's title. */
  failed?: string;
  /** Shown above the error or the data, once loaded (the link back to a list). */
  back?: ReactNode;
  /** What an empty list means and what to do about it. */
  empty?: ReactNode;
  /** When the data counts as empty (default: an empty array). */
  isEmpty?: (data: T) => boolean;
  children: (data: T) => ReactNode;
};

/** A query's states: the loading line, the error box, `empty` when the data is empty, else `children` with the data. */
export function QueryView<T>({ query, loading, failed, back, empty, isEmpty, children }: QueryViewProps<T>) {
  if (query.isPending) return <Loading what={loading} />;
  const data = query.data as T;
  const shown = query.error ? (
    <ErrorBox error={query.error} title={failed} />
  ) : empty !== undefined && (isEmpty ? isEmpty(data) : Array.isArray(data) && data.length === 0) ? (
    empty
  ) : (
    children(data)
  );
  return (
    <>
      {back}
      {shown}
    </>
  );
}

/**
 * A section listing a query's data (a QueryView): `intro` above (an explanation, a search form), the error of the
 * actions on its items below.
 */
type ListSectionProps<T> = QueryViewProps<T> & {
  title: string;
  actions?: ReactNode;
  intro?: ReactNode;
  error?: unknown;
};

export function ListSection<T>({ title, actions, intro, error, ...view }: ListSectionProps<T>) {
  return (
    <Section title={title} actions={actions}>
      {intro}
      <QueryView {...view} />
      <ErrorBox error={error} />
    </Section>
  );
}

type ActionOptions<TData, TVars> = {
  run: (vars: TVars) => Promise<TData>;
  /** Runs first on success (form resets, cached records set from the answer). */
  onSuccess?: (data: TData, vars: TVars) => void;
  /** The toast that says it is done. */
  done?: string | ((data: TData, vars: TVars) => string);
  /** The queries the action changed, refreshed in this order (and awaited) after the toast. */
  invalidate?: QueryKey[];
  /** Runs last, once the refreshed data is in (navigation, closing an editor). */
  then?: (data: TData, vars: TVars) => void;
  onSettled?: () => void;
};

/** A mutation that, on success, resets what `onSuccess` says, toasts `done`, refreshes `invalidate`, then `then`. */
export function useAction<TData, TVars = void>({
  run,
  onSuccess,
  done,
  invalidate = [],
  then,
  onSettled,
}: ActionOptions<TData, TVars>) {
  const queries = useQueryClient();
  const toast = useToast();
  return useMutation<TData, Error, TVars>({
    mutationFn: run,
    onSuccess: async (data, vars) => {
      onSuccess?.(data, vars);
      const message = typeof done === 'function' ? done(data, vars) : done;
      if (message) toast(message);
      for (const queryKey of invalidate) await queries.invalidateQueries({ queryKey });
      then?.(data, vars);
    },
    onSettled,
  });
}

/** A collection of the client's that lists, creates and removes (by id) its items: `api.functions.hooks`. */
type Collection<T, TInput> = {
  list: () => Promise<T[]>;
  create: (input: TInput) => Promise<unknown>;
  remove: (id: string) => Promise<unknown>;
};

/**
 * A collection the page lists, adds to and deletes from: the list (a query under `key`), `create` (posting what
 * `input` makes of the form's state and the action's argument; then `onCreated`, the toast `created`) and `remove`
 * (run with the item's id; the toast `deleted`), both refreshing the list once done.
 */
export function useListResource<T, TInput, TVars = void>({
  key,
  collection,
  input,
  onCreated,
  created,
  deleted,
}: {
  key: QueryKey;
  collection: Collection<T, TInput>;
  input: (vars: TVars) => TInput;
  onCreated?: () => void;
  created: string;
  deleted: string;
}) {
  return {
    list: useQuery({ queryKey: key, queryFn: () => collection.list() }),
    create: useAction({
      run: (vars: TVars) => collection.create(input(vars)),
      onSuccess: onCreated,
      done: created,
      invalidate: [key],
    }),
    remove: useAction({ run: (id: string) => collection.remove(id), done: deleted, invalidate: [key] }),
  };
}

/**
 * The page of a list resource (useListResource): the list (a ListSection showing the error of `error`, else of
 * deleting) and below it the form that adds to it (a FormSection with `form`'s texts and `fields`).
 */
export function ListResourceSections<T, TVars>({
  resource: { list, create, remove },
  form,
  fields,
  onCreate,
  error,
  ...section
}: Omit<ListSectionProps<T>, 'query'> & {
  resource: {
    list: QueryState<T>;
    create: { isPending: boolean; error: unknown; mutate: (vars: TVars) => void };
    remove: { error: unknown };
  };
  form: { title: string; submit: string; failed: string };
  fields: ReactNode;
  /** What submitting the form does: run `resource.create` (with what it needs). */
  onCreate: () => unknown;
}) {
  return (
    <>
      <ListSection {...section} query={list} error={error ?? remove.error} />
      <FormSection {...form} action={create} onSubmit={onCreate}>
        {fields}
      </FormSection>
    </>
  );
}

/** Cursor paging: the cursors of the pages seen so far (going back is going to the previous cursor). */
export function useCursors() {
  const [cursors, setCursors] = useState<(string | undefined)[]>([undefined]);
  return {
    /** The cursor of the page shown. */
    after: cursors[cursors.length - 1],
    /** The page shown, from 1. */
    page: cursors.length,
    reset: () => setCursors([undefined]),
    back: () => setCursors(cursors.slice(0, -1)),
    forward: (next: string | null | undefined) => setCursors([...cursors, next ?? undefined]),
  };
}

/** The pager of a cursor-paged list: back to the previous cursor, on to the page's `next` cursor. */
export function CursorPager({
  pages,
  next,
  label,
  showPage,
  previousLabel,
  nextLabel,
}: {
  pages: ReturnType<typeof useCursors>;
  next: string | null | undefined;
  label: string;
  showPage?: boolean;
  previousLabel?: string;
  nextLabel?: string;
}) {
  return (
    <Pager
      label={label}
      page={showPage ? pages.page : undefined}
      previous={previousLabel}
      next={nextLabel}
      hasPrevious={pages.page > 1}
      hasNext={!!next}
      onPrevious={pages.back}
      onNext={() => pages.forward(next)}
    />
  );
}
