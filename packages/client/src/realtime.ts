// Realtime: committed row changes of published tables, as the caller may read them (row level security for
// end-users and the publishable key). Two transports of the same subscription: server-sent events over fetch (the
// default: one HTTP response that streams; headers carry the credentials, which EventSource cannot) and graphql-ws.
// Their libraries are loaded on first use: an app (or the CLI) that never subscribes never pays for them.
import { errorOf, TesseraError } from './errors.ts';
import type { Http } from './http.ts';
import type { Row } from './data.ts';

/** One change: a row inserted, updated or deleted (a delete carries the old row's key), or a `gap` (changes may be missing: re-read). */
export type Change<R = Row> = {
  table: string;
  operation: 'insert' | 'update' | 'delete' | 'gap';
  row: R | null;
  old: Partial<R> | null;
  at: string;
  truncated: boolean;
};

export type SubscribeOptions = {
  /** Only this table's changes. */
  table?: string;
  /** `sse` (default) or `ws` (graphql-ws). */
  transport?: 'sse' | 'ws';
  /** Called when the stream fails (it is not reopened). */
  onError?: (err: TesseraError) => void;
};

/** A running subscription: `ready` resolves once the server listens; `close` ends it. */
export type Subscription = { ready: Promise<void>; close: () => void };

const QUERY =
  'subscription Changes($table: String) { dataChanges(table: $table) { table operation row old at truncated } }';

export class Realtime {
  readonly #http: Http;
  constructor(http: Http) {
    this.#http = http;
  }

  /** Calls `onChange` for every change the caller may see until `close`. */
  subscribe<R = Row>(onChange: (change: Change<R>) => void, opts: SubscribeOptions = {}): Subscription {
    return opts.transport === 'ws' ? this.#ws(onChange, opts) : this.#sse(onChange, opts);
  }

  #sse<R>(onChange: (change: Change<R>) => void, opts: SubscribeOptions): Subscription {
    const abort = new AbortController();
    const fail = (err: unknown) => {
      if (!abort.signal.aborted)
        opts.onError?.(
          err instanceof TesseraError
            ? err
            : new TesseraError({ code: 'NETWORK_ERROR', status: 0, message: String((err as Error)?.message ?? err) }),
        );
    };
    const ready = (async () => {
      const headers = {
        ...this.#http.headers,
        ...(await this.#http.credentials()),
        'content-type': 'application/json',
        accept: 'text/event-stream',
      };
      const res = await this.#http.fetch(this.#http.href('/realtime'), {
        method: 'POST',
        headers,
        body: JSON.stringify({ query: QUERY, variables: { table: opts.table ?? null } }),
        signal: abort.signal,
      });
      if (!res.ok || !res.body) {
        const text = await res.text();
        let body: unknown = text;
        try {
          body = JSON.parse(text);
        } catch {
          // not JSON
        }
        throw errorOf(res.status, body, res.headers.get('x-request-id') ?? undefined);
      }
      const { createParser } = await import('eventsource-parser');
      const parser = createParser({
        onEvent: (event) => {
          if (event.event !== 'next') return;
          const payload = JSON.parse(event.data) as {
            data?: { dataChanges: Change<R> };
            errors?: { message: string; extensions?: { code?: string } }[];
          };
          if (payload.errors?.length) fail(errorOf(400, { errors: payload.errors }, undefined));
          else if (payload.data) onChange(payload.data.dataChanges);
        },
      });
      const reader = res.body.getReader();
      const decoder = new TextDecoder();
      void (async () => {
        try {
          for (;;) {
            const { done, value } = await reader.read();
            if (done) return;
            parser.feed(decoder.decode(value, { stream: true }));
          }
        } catch (err) {
          fail(err);
        }
      })();
    })();
    ready.catch(fail);
    return { ready, close: () => abort.abort() };
  }

  #ws<R>(onChange: (change: Change<R>) => void, opts: SubscribeOptions): Subscription {
    let resolveReady!: () => void;
    let rejectReady!: (err: unknown) => void;
    const ready = new Promise<void>((res, rej) => {
      resolveReady = res;
      rejectReady = rej;
    });
    let closed = false;
    let stop = () => {};
    let dispose = () => {};
    void import('graphql-ws/client').then(({ createClient: createWsClient }) => {
      if (closed) return;
      const client = createWsClient({
        url: this.#http.href('/realtime').replace(/^http/, 'ws'),
        connectionParams: async () => await this.#http.credentials(),
        retryAttempts: 0,
        lazy: true,
        on: { connected: () => resolveReady() },
      });
      dispose = () => void client.dispose();
      stop = client.subscribe<{ dataChanges: Change<R> }>(
        { query: QUERY, variables: { table: opts.table ?? null } },
        {
          next: (msg) => {
            if (msg.errors?.length) opts.onError?.(errorOf(400, { errors: msg.errors }, undefined));
            else if (msg.data) onChange(msg.data.dataChanges);
          },
          error: (err) => {
            const e = Array.isArray(err)
              ? errorOf(400, { errors: err }, undefined)
              : new TesseraError({
                  code: 'REALTIME_CLOSED',
                  status: 0,
                  message: `The realtime socket closed: ${(err as { reason?: string; message?: string })?.reason ?? (err as Error)?.message ?? 'unknown'}`,
                });
            rejectReady(e);
            opts.onError?.(e);
          },
          complete: () => {},
        },
      );
    }, rejectReady);
    ready.catch(() => {});
    return {
      ready,
      close: () => {
        closed = true;
        stop();
        dispose();
      },
    };
  }
}
