// Every module of hand-written handlers, registered by the front door after the route table's rows.
import type { RawHandlerModule } from './types.ts';

export type { RawHandlerModule, RawHandlerDeps } from './types.ts';

export const RAW_HANDLERS: readonly RawHandlerModule[] = [];
