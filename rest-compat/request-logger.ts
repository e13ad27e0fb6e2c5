// Fastify's per-request logger (`req.log`, bound to the request id), made only when something logs at an
// enabled level. A pino child serialises its bindings through the redaction rules when it is made, which
// costs more than routing a small request, and most requests never log. Used as the front door's
// `childLoggerFactory`.
import type { FastifyBaseLogger } from 'fastify';

type ChildOptions = NonNullable<Parameters<FastifyBaseLogger['child']>[1]>;
type LevelEnabled = { isLevelEnabled: (level: string) => boolean };

/** Stands for `parent.child(bindings)` and makes it on first use (one small object per request, methods shared). */
class LazyRequestLogger {
  #parent: FastifyBaseLogger;
  #bindings: Record<string, unknown>;
  #real: FastifyBaseLogger | undefined;
  constructor(parent: FastifyBaseLogger, bindings: Record<string, unknown>) {
    this.#parent = parent;
    this.#bindings = bindings;
  }
  #get(): FastifyBaseLogger {
    return (this.#real ??= this.#parent.child(this.#bindings));
  }
  #log(level: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace', args: unknown[]): void {
    if (this.#real || (this.#parent as unknown as LevelEnabled).isLevelEnabled(level))
      (this.#get()[level] as (...a: unknown[]) => void)(...args);
  }
  get level(): string {
    return (this.#real ?? this.#parent).level;
  }
  set level(value: string) {
    this.#get().level = value;
  }
  child(bindings: Record<string, unknown>, opts?: ChildOptions): FastifyBaseLogger {
    return this.#get().child(bindings, opts);
  }
  isLevelEnabled(level: string): boolean {
    return ((this.#real ?? this.#parent) as unknown as LevelEnabled).isLevelEnabled(level);
  }
  silent(): void {}
  fatal(...args: unknown[]): void {
    this.#log('fatal', args);
  }
  error(...args: unknown[]): void {
    this.#log('error', args);
  }
  warn(...args: unknown[]): void {
    this.#log('warn', args);
  }
  info(...args: unknown[]): void {
    this.#log('info', args);
  }
  debug(...args: unknown[]): void {
    this.#log('debug', args);
  }
  trace(...args: unknown[]): void {
    this.#log('trace', args);
  }
}

/** A logger that becomes `parent.child(bindings)` on first use; with options (a route's own level) the child is made at once. */
export function lazyRequestLogger(
  parent: FastifyBaseLogger,
  bindings: Record<string, unknown>,
  opts: ChildOptions = {},
): FastifyBaseLogger {
  if (Object.keys(opts).length > 0) return parent.child(bindings, opts);
  return new LazyRequestLogger(parent, bindings) as unknown as FastifyBaseLogger;
}
