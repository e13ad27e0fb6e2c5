// The storage subgraph's resolvers: thin, every decision is in services/.
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper/resolverMap.js';
import GraphQLUpload from 'graphql-upload/GraphQLUpload.mjs';
import type { FileUpload } from 'graphql-upload/processRequest.mjs';
import { requireOperatorPrincipal } from '../../../platform/admin-scopes.ts';
import { errors } from '../../../platform/errors.ts';
import type { StoragePolicy } from '../entities/index.ts';
import { requireKey } from '../services/access.ts';
import type { PlanLimits } from '../services/limits.ts';
import type { BeginInput, StoredObject } from '../services/objects.ts';
import { projectForKeyOrInternal, type StorageContext } from './context.ts';

type Ctx = StorageContext;
type ProjectRef = { id: string; plan?: { limits?: PlanLimits | null } | null };
type TenantRef = { id: string; projectIds?: string[] | null };
type PageArgs = { first?: number | null; after?: string | null };

const iso = (d: Date | null) => (d ? d.toISOString() : null);

/** The plan limits the router handed over with the reference (`@requires`); remembered for uploads. */
async function planOf(ref: ProjectRef, ctx: Ctx): Promise<PlanLimits> {
  const limits = ref.plan?.limits;
  if (!limits) throw errors.notFound('project', ref.id);
  await ctx.services.limits.remember(ref.id, limits);
  return limits;
}

const Query = {
  _blobStoreId: async (_: unknown, _a: unknown, ctx: Ctx) => {
    if (ctx.principal.kind !== 'internal') throw errors.forbidden('_blobStoreId is for the front door only');
    return await ctx.services.blobStoreId();
  },
  storageObjects: async (_: unknown, args: Parameters<Ctx['services']['objects']['list']>[1], ctx: Ctx) =>
    await ctx.services.objects.list(ctx.principal, args),
  storageObject: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.objects.get(ctx.principal, id),
  storageFolders: async (_: unknown, args: Parameters<Ctx['services']['objects']['folders']>[1], ctx: Ctx) =>
    await ctx.services.objects.folders(ctx.principal, args),
  storagePolicies: async (_: unknown, args: PageArgs, ctx: Ctx) =>
    await ctx.services.policies.page(requireKey(ctx.principal, 'Managing policies').projectId, args),
  storageProject: (_: unknown, { projectId }: { projectId?: string | null }, ctx: Ctx): ProjectRef => ({
    id: projectForKeyOrInternal(ctx, projectId),
  }),
};

const Mutation = {
  uploadStorageObject: async (
    _: unknown,
    args: {
      file: Promise<FileUpload>;
      folder?: string | null;
      name?: string | null;
      contentType?: string | null;
      confirm?: boolean | null;
      upsert?: boolean | null;
      projectId?: string | null;
    },
    ctx: Ctx,
  ) => {
    const file = await args.file;
    const input: BeginInput = {
      projectId: args.projectId,
      folder: args.folder,
      name: args.name ?? file.filename,
      contentType: args.contentType ?? (file.mimetype || undefined),
      confirm: args.confirm,
      upsert: args.upsert,
    };
    return await ctx.services.objects.upload(ctx.principal, input, file.createReadStream(), ctx.requestId);
  },
  confirmStorageUpload: async (_: unknown, { id }: { id: string }, ctx: Ctx) =>
    await ctx.services.objects.confirm(ctx.principal, id),
  deleteStorageObject: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.objects.remove(ctx.principal, id);
    return true;
  },
  createStoragePolicy: async (_: unknown, { input }: { input: Record<string, unknown> }, ctx: Ctx) =>
    await ctx.services.policies.create(requireKey(ctx.principal, 'Managing policies').projectId, input),
  deleteStoragePolicy: async (_: unknown, { id }: { id: string }, ctx: Ctx) => {
    await ctx.services.policies.remove(requireKey(ctx.principal, 'Managing policies').projectId, id);
    return true;
  },
  _beginStorageUpload: async (_: unknown, { input }: { input: BeginInput }, ctx: Ctx) =>
    await ctx.services.objects.begin(ctx.principal, input, ctx.requestId),
  _completeStorageUpload: async (_: unknown, a: { id: string; size: number; sha256: string }, ctx: Ctx) =>
    await ctx.services.objects.complete(ctx.principal, a.id, a.size, a.sha256),
  _abortStorageUpload: async (_: unknown, { id }: { id: string }, ctx: Ctx) => await ctx.services.objects.abort(id),
};

const Project = {
  __resolveReference: (ref: ProjectRef) => ref,
  storageApiUrl: (_p: ProjectRef, _a: unknown, ctx: Ctx) => ctx.services.locations.apiUrl(),
  storageLimits: async (p: ProjectRef, _a: unknown, ctx: Ctx) => {
    const projectId = projectForKeyOrInternal(ctx, p.id);
    const plan = await planOf(p, ctx);
    const used = await ctx.services.limits.used(projectId);
    return {
      quotaBytes: plan.maxStorageBytes,
      usedBytes: used,
      remainingBytes: ctx.services.limits.remaining(plan, used),
      maxUploadBytes: ctx.services.limits.maxUpload(plan),
    };
  },
  storageUsage: async (p: ProjectRef, _a: unknown, ctx: Ctx) => {
    // The operator reads every project's usage (the admin API's projects); reached only through `_entities`.
    const projectId = ctx.principal.kind === 'operator' ? p.id : projectForKeyOrInternal(ctx, p.id);
    const plan = await planOf(p, ctx);
    const usage = await ctx.services.objects.usage(projectId);
    const used = usage.bytes + usage.pendingBytes;
    return {
      ...usage,
      quotaBytes: plan.maxStorageBytes,
      remainingBytes: ctx.services.limits.remaining(plan, used),
      maxUploadBytes: ctx.services.limits.maxUpload(plan),
    };
  },
};

// An operator's tenant row: the files of all the account's projects (the router hands over their ids).
const OperatorTenant = {
  storageUsage: async (t: TenantRef, _a: unknown, ctx: Ctx) => {
    requireOperatorPrincipal(ctx.principal);
    return await ctx.services.objects.usageTotals(t.projectIds ?? []);
  },
};

const StorageObject = {
  etag: (o: StoredObject) => (o.sha256 ? `"${o.sha256}"` : null),
  downloadUrl: (o: StoredObject, _a: unknown, ctx: Ctx) => ctx.services.locations.downloadPath(o.id),
  createdAt: (o: StoredObject) => iso(o.createdAt),
  updatedAt: (o: StoredObject) => iso(o.updatedAt),
  confirmedAt: (o: StoredObject) => iso(o.confirmedAt),
};

const StoragePolicyType = {
  createdAt: (p: StoragePolicy) => iso(p.createdAt),
  contentTypes: (p: StoragePolicy) => p.contentTypes ?? null,
};

export const storageResolvers = {
  Upload: GraphQLUpload,
  Query,
  Mutation,
  Project,
  OperatorTenant,
  StorageObject,
  StoragePolicy: StoragePolicyType,
} as unknown as GraphQLResolverMap<StorageContext>;
