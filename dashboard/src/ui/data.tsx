// How the pages read and change data, one way each: a query shown through its states (loading, error, empty, data),
// an action (a mutation) that says it is done, refreshes what it changed and then moves on, and cursor paging.
import { useState, type ReactNode } from 'react';
import { useMutation, useQueryClient, type QueryKey } from '@tanstack/react-query';
import { ErrorBox, Loading, useToast } from './index.tsx';

/** What QueryView needs of a query (a react-query result). */
type QueryState<T> = { isPending: boolean; error: unknown; data: T | undefined };

/**
 * A query's states: the loading line (`loading` says what), the error box, `empty` when the data is empty (an empty
 * array, or what `isEmpty` says), else `children` with the data.
 */
export function QueryView<T>({
  query,
  loading,
  empty,
  isEmpty,
  children,
}: {
  query: QueryState<T>;
  loading?: string;
  empty?: ReactNode;
  isEmpty?: (data: T) => boolean;
  children: (data: T) => ReactNode;
}) {
  if (query.isPending) return <Loading what={loading} />;
  if (query.error) return <ErrorBox error={query.error} />;
  const data = query.data as T;
  if (empty !== undefined && (isEmpty ? isEmpty(data) : Array.isArray(data) && data.length === 0)) return <>{empty}</>;
  return <>{children(data)}</>;
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
