// Every module of hand-written handlers, registered by the front door after the route table's rows.
import type { RawHandlerModule } from './types.ts';
import { identityHandlers } from './identity/index.ts';
import { storageHandlers } from './storage.ts';
import { functionsHandlers } from './functions.ts';

export type { RawHandlerModule, RawHandlerDeps } from './types.ts';

export const RAW_HANDLERS: readonly RawHandlerModule[] = [identityHandlers, storageHandlers, functionsHandlers];
