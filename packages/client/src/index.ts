// @tessera/client: a typed client of Tessera's REST API for browsers, apps, servers and the `tessera` CLI.
//
//   const tessera = createClient({ url: 'https://api.example.com', key: 'tpk_...', clientId: 'tsc_...' });
//   await tessera.auth.signInWithPassword({ email, password });
//   const posts = await tessera.from('posts').select('id, title').eq('published', true).order('id').limit(20);
//
// The REST types are generated from /openapi.json (./generated/openapi.ts); errors are TesseraError with `code`,
// `status` and `requestId`.
import { Admin } from './admin.ts';
import { Auth, type AuthOptions } from './auth.ts';
import { DataActions, TableRef, type DatabaseShape, type Row } from './data.ts';
import { Functions } from './functions.ts';
import { Http } from './http.ts';
import { Realtime } from './realtime.ts';
import { Storage } from './storage.ts';
import { TenantApi } from './tenant.ts';

export { TesseraError, isTesseraError } from './errors.ts';
export type { Session, SessionStore, AuthOptions } from './auth.ts';
export type { Change, SubscribeOptions, Subscription } from './realtime.ts';
export type { UploadBody, UploadOptions } from './storage.ts';
export type { InvokeResult, FunctionInput } from './functions.ts';
export type { AdminUser } from './admin.ts';
export type { Reauth } from './tenant.ts';
export type {
  Row,
  Where,
  OrderBy,
  Aggregate,
  WriteResult,
  SqlResult,
  SqlStatement,
  DatabaseShape,
  DatabaseUsage,
} from './data.ts';
export type {
  ProjectSchema,
  SchemaTable,
  SchemaColumn,
  SchemaPolicy,
  AppliedMigration,
  ApplyMigrationResult,
} from './schema.ts';
export type * from './types.ts';
export { Http, SESSION_ERROR_CODES } from './http.ts';

export { VERSION } from './version.ts';
export {
  createOperatorClient,
  OperatorClient,
  OperatorAdmin,
  PLAN_LIMITS,
  isPlanLimitKey,
  storageUsageOf,
  databaseUsageOf,
  functionUsageOf,
  SERVER_STATES,
} from './operator.ts';
export type {
  OperatorClientOptions,
  OperatorPlan,
  OperatorPlanLimits,
  PlanLimitKey,
  PlanLimitUnit,
  PlanInput,
  PlanChange,
  OperatorSettings,
  OperatorTenant,
  OperatorProject,
  OperatorDatabaseUsage,
  FunctionUsage,
  AuditEntry,
  OperatorKey,
  NewOperatorKey,
  StorageUsage,
  TenantStorageUsage,
  TenantDatabaseUsage,
  ProjectServer,
  ServerState,
  ServerInput,
  ServerChange,
} from './operator.ts';

export type ClientOptions = AuthOptions & {
  /** Tessera's public address, e.g. `https://api.example.com`. */
  url: string;
  /** A project key, sent as X-Api-Key: the publishable key (`tpk_...`) in browsers and apps, the secret key (`tsk_...`) on servers only. */
  key?: string;
  /** A fixed bearer token (a tenant token for management; otherwise the end-user session is used). */
  accessToken?: string;
  /** Another fetch (tests, proxies). */
  fetch?: typeof fetch;
  /** Headers sent with every call. */
  headers?: Record<string, string>;
};

/** Tessera for one project (or, with a tenant token, for management). */
export class TesseraClient<DB extends DatabaseShape = DatabaseShape> {
  readonly http: Http;
  /** End-user sign-up and sign-in, sessions, MFA, password reset. */
  readonly auth: Auth;
  /** The data API's actions, bodies as documented. */
  readonly data: DataActions;
  readonly storage: Storage;
  readonly realtime: Realtime;
  readonly functions: Functions;
  /** Tenant management (accounts, projects, keys, CORS, OIDC clients): needs a tenant token (`tenant.login`). */
  readonly tenant: TenantApi;
  /** The project's end-user admin API (`/admin/users`): needs the secret key. */
  readonly admin: Admin;

  constructor(opts: ClientOptions) {
    this.http = new Http(opts);
    this.auth = new Auth(this.http, opts);
    this.data = new DataActions(this.http);
    this.storage = new Storage(this.http);
    this.realtime = new Realtime(this.http);
    this.functions = new Functions(this.http);
    this.tenant = new TenantApi(this.http);
    this.admin = new Admin(this.http);
    const fixed = opts.accessToken;
    // The bearer of a call: a fixed token, the tenant's session, else the end-user's (refreshed when it expires).
    this.http.token = async () => fixed ?? this.tenant.session?.access_token ?? (await this.auth.accessToken());
    this.http.onUnauthorized = async () => {
      if (fixed) return false;
      if (this.tenant.session)
        return await this.tenant.refresh().then(
          () => true,
          () => false,
        );
      if (!this.auth.session?.refreshToken) return false;
      return await this.auth.refresh().then(
        () => true,
        () => false,
      );
    };
  }

  /** One table: `from('posts').select('id, title').eq('published', true).order('id', { ascending: false }).limit(10)`. */
  from<T extends keyof DB & string>(table: T): TableRef<DB[T]>;
  from<R extends Row = Row>(table: string): TableRef<R>;
  from(table: string): TableRef<Row> {
    return new TableRef(this.data, table);
  }
}

/** Creates a client. */
export function createClient<DB extends DatabaseShape = DatabaseShape>(opts: ClientOptions): TesseraClient<DB> {
  return new TesseraClient<DB>(opts);
}
export type { ProjectMove } from './operator.ts';
