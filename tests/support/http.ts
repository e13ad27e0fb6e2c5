// A tiny JSON HTTP client for end-to-end tests.
export type Res = { status: number; body: any; headers: Headers }; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Creates a client bound to a base URL. */
export function client(base: string) {
  return async function call(
    method: string,
    path: string,
    opts: { body?: unknown; token?: string; apiKey?: string; headers?: Record<string, string>; raw?: string } = {},
  ): Promise<Res> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.body !== undefined || opts.raw !== undefined) headers['content-type'] ??= 'application/json';
    if (opts.token) headers.authorization = `Bearer ${opts.token}`;
    if (opts.apiKey) headers['x-api-key'] = opts.apiKey;
    const res = await fetch(base + path, {
      method,
      headers,
      body: opts.raw ?? (opts.body === undefined ? undefined : JSON.stringify(opts.body)),
    });
    return await asRes(res);
  };
}

/** A fetch response as a Res: its body parsed as JSON, or the text when it is not JSON (undefined when empty). */
export async function asRes(res: Response): Promise<Res> {
  const text = await res.text();
  let body: unknown = text;
  try {
    body = text ? JSON.parse(text) : undefined;
  } catch {
    // not JSON (HTML, plain text)
  }
  return { status: res.status, body, headers: res.headers };
}
