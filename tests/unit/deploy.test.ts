// The deploy kit (deploy/) checked statically, since no container engine or cluster runs here: the Dockerfile
// and compose.yaml parsed and cross-checked against the config schema and the roles main.ts knows, and the
// Kubernetes overlays rendered with `kubectl kustomize` and every object validated against the Kubernetes schemas.
import fs from 'node:fs';
import path from 'node:path';
import { execFileSync, spawn } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { parseAllDocuments, parse as parseYaml } from 'yaml';
import { DockerfileParser } from 'dockerfile-ast';
import { CONFIG_SCHEMA, loadConfig } from '../../platform/config.ts';
import { readSupergraphConfig } from '../../router/compose.ts';

const ROOT = path.resolve(import.meta.dirname, '..', '..');
const DEPLOY = path.join(ROOT, 'deploy');
const CONFIG_ENVS = new Set<string>(Object.values(CONFIG_SCHEMA).map((r) => r.env));
const SUBGRAPH_NAMES = readSupergraphConfig().map((e) => e.name);
const ROLES = ['front-door', 'router', ...SUBGRAPH_NAMES.map((n) => `subgraph:${n}`)];
const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
  dependencies: Record<string, string>;
};

type Env = Record<string, string>;

/** The role a `node main.ts --role X` argument list runs, checked against the roles main.ts accepts. */
function roleOf(argv: string[]): string {
  expect(argv.slice(0, 2)).toEqual(['node', 'main.ts']);
  const i = argv.indexOf('--role');
  expect(i).toBeGreaterThan(1);
  const role = argv[i + 1]!;
  expect(ROLES).toContain(role);
  return role;
}

/** Checks an environment a split-mode process starts with: every key a config row, every value accepted, the required ones set. */
function checkProcessEnv(env: Env, role: string, what: string): ReturnType<typeof loadConfig> {
  const unknown = Object.keys(env).filter((k) => !CONFIG_ENVS.has(k) && k !== 'NODE_ENV' && !k.startsWith('OTEL_'));
  expect({ what, unknown }).toEqual({ what, unknown: [] });
  const config = loadConfig(env);
  // `--role` alone makes a process one role of a split deployment: no role reads TESSERA_MODE, so the kit sets none.
  expect({ what, TESSERA_MODE: env.TESSERA_MODE }).toEqual({ what, TESSERA_MODE: undefined });
  // A split-mode process refuses to start without the shared secret, and never runs an embedded database.
  for (const required of ['TESSERA_INTERNAL_SECRET', 'DATABASE_URL', 'TESSERA_SUBGRAPH_URLS'])
    expect({ what, required, set: Boolean(env[required]) }).toEqual({ what, required, set: true });
  if (role === 'front-door') expect({ what, routerUrl: Boolean(config.routerUrl) }).toEqual({ what, routerUrl: true });
  if (config.storageDriver === 's3') expect({ what, bucket: Boolean(config.s3Bucket) }).toEqual({ what, bucket: true });
  const urls = new Map(config.subgraphUrls.split(',').map((p) => p.split('=') as [string, string]));
  expect([...urls.keys()].sort()).toEqual([...SUBGRAPH_NAMES].sort());
  return config;
}

/** Every file main.ts loads (relative imports, followed) and every package it imports. */
function runtimeImports(): { files: Set<string>; packages: Set<string> } {
  const files = new Set<string>();
  const packages = new Set<string>();
  const visit = (file: string) => {
    if (files.has(file)) return;
    files.add(file);
    const src = fs.readFileSync(file, 'utf8');
    for (const m of src.matchAll(
      /^(?:import|export)(?!\s+type\s)[^;]*?from\s+'([^']+)'|^import\s+'([^']+)'|import\('([^']+)'\)/gms,
    )) {
      const spec = m[1] ?? m[2] ?? m[3]!;
      if (spec.startsWith('.')) visit(path.resolve(path.dirname(file), spec));
      else if (!spec.startsWith('node:'))
        packages.add(spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);
    }
  };
  visit(path.join(ROOT, 'main.ts'));
  return { files, packages };
}

describe('deploy/Dockerfile', () => {
  const dockerfile = DockerfileParser.parse(fs.readFileSync(path.join(DEPLOY, 'Dockerfile'), 'utf8'));
  const all = dockerfile.getInstructions();
  const froms = dockerfile.getFROMs();
  const finalStart = all.indexOf(froms.at(-1)!);
  const final = all.slice(finalStart);
  const args = (keyword: string) =>
    final.filter((i) => i.getKeyword() === keyword).map((i) => i.getArgumentsContent() ?? '');

  it('is multi-stage and runs as a user that is not root, with a health check and main.ts as the entry point', () => {
    expect(froms.length).toBeGreaterThanOrEqual(2);
    const users = args('USER');
    expect(users.length).toBeGreaterThan(0);
    expect(users.at(-1)).not.toMatch(/^(root|0)(:|$)/);
    const health = args('HEALTHCHECK');
    expect(health).toHaveLength(1);
    // A shell probe, not a Node process every 10 s; the script is copied into the image.
    const check = JSON.parse(health[0]!.replace(/^--[^C]*CMD\s+/, '').replace(/^CMD\s+/, '')) as string[];
    expect(check).toEqual(['bash', 'scripts/healthcheck.sh']);
    expect(fs.existsSync(path.join(ROOT, check[1]!))).toBe(true);
    expect(args('COPY').some((a) => a.split(/\s+/)[0] === 'scripts')).toBe(true);
    const entry = JSON.parse(args('ENTRYPOINT')[0]!) as string[];
    const cmd = JSON.parse(args('CMD')[0]!) as string[];
    roleOf([...entry, ...cmd]);
  });

  it('copies every file main.ts loads, and installs every package it imports as a production dependency', () => {
    const copied = args('COPY')
      .filter((a) => !a.startsWith('--from'))
      .flatMap((a) => a.split(/\s+/).slice(0, -1));
    const { files, packages } = runtimeImports();
    const missing = [...files]
      .map((f) => path.relative(ROOT, f))
      .filter((f) => !copied.some((c) => f === c || f.startsWith(`${c}/`)));
    expect(missing).toEqual([]);
    const notProduction = [...packages].filter((p) => !pkg.dependencies[p]);
    expect(notProduction).toEqual([]);
    // Files read at run time beside the code.
    for (const f of ['supergraph.yaml', 'schema', 'package.json']) expect(copied).toContain(f);
    expect(
      all.find((i) => i.getKeyword() === 'RUN' && /npm ci/.test(i.getArgumentsContent() ?? ''))?.getArgumentsContent(),
    ).toMatch(/--omit=dev/);
  });

  it('sets only config variables, to values the config schema accepts, and listens where its EXPOSE says', () => {
    const env: Env = {};
    for (const i of final.filter((x) => x.getKeyword() === 'ENV'))
      for (const p of (
        i as unknown as { getProperties: () => { getName: () => string; getValue: () => string }[] }
      ).getProperties())
        env[p.getName()] = p.getValue();
    const unknown = Object.keys(env).filter((k) => !CONFIG_ENVS.has(k) && k !== 'NODE_ENV');
    expect(unknown).toEqual([]);
    const config = loadConfig(env);
    const exposed = args('EXPOSE')
      .flatMap((a) => a.split(/\s+/))
      .map(Number);
    expect(exposed.sort()).toEqual([config.port, config.routerPort, config.subgraphPort!].sort());
    // Reached from other containers: nothing listens on loopback only.
    expect([config.host, config.routerHost, config.subgraphHost]).toEqual(['0.0.0.0', '0.0.0.0', '0.0.0.0']);
  });
});

describe("scripts/healthcheck.sh (the image's HEALTHCHECK)", () => {
  /** Runs the probe with the image's three role ports set to `ports` (0: none). */
  const probe = (ports: [number, number, number]) =>
    new Promise<number>((resolve) => {
      const child = spawn('bash', [path.join(ROOT, 'scripts', 'healthcheck.sh')], {
        env: {
          PATH: process.env.PATH,
          PORT: String(ports[0]),
          TESSERA_ROUTER_PORT: String(ports[1]),
          TESSERA_SUBGRAPH_PORT: String(ports[2]),
        },
        stdio: 'ignore',
      });
      child.on('exit', (code) => resolve(code ?? -1));
    });
  /** A server answering GET /livez with `status`, on a free port. */
  const serve = async (status: number) => {
    const server = http.createServer((req, res) => {
      res.statusCode = req.url === '/livez' ? status : 404;
      res.end('{}');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { server, port: (server.address() as AddressInfo).port };
  };
  /** A port nothing listens on (bound, then closed). */
  const closedPort = async () => {
    const { server, port } = await serve(200);
    await new Promise((r) => server.close(r));
    return port;
  };

  it('passes when the role listening on any of the three ports answers /livez 200', async () => {
    const { server, port } = await serve(200);
    const none = await closedPort();
    try {
      expect(await probe([port, 0, 0])).toBe(0);
      expect(await probe([none, port, none])).toBe(0); // a router container
      expect(await probe([none, none, port])).toBe(0); // a subgraph container
    } finally {
      server.close();
    }
  });

  it('fails when nothing listens, or the process answers anything but 200', async () => {
    const none = await closedPort();
    expect(await probe([none, none, none])).toBe(1);
    const { server, port } = await serve(503);
    try {
      expect(await probe([port, none, none])).toBe(1);
    } finally {
      server.close();
    }
  });
});

/** compose.yaml with ${VAR:?message} and ${VAR:-default} interpolated from `vars` (as `docker compose` does). */
function loadCompose(vars: Env): { services: Record<string, Record<string, unknown>> } {
  const raw = fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8');
  const missing: string[] = [];
  const text = raw.replace(/\$\{([A-Z0-9_]+)(?::([?-])([^}]*))?\}/g, (_m, name: string, op?: string, arg?: string) => {
    if (vars[name]) return vars[name];
    if (op === '-') return arg ?? '';
    missing.push(name);
    return '';
  });
  expect(missing).toEqual([]);
  return parseYaml(text.replace(/\$\$/g, '$'), { merge: true }) as {
    services: Record<string, Record<string, unknown>>;
  };
}

describe('deploy/compose.yaml', () => {
  // Every variable compose requires is listed in .env.example; give each a value as an operator would.
  const example = fs.readFileSync(path.join(DEPLOY, '.env.example'), 'utf8');
  const required = [...fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8').matchAll(/\$\{([A-Z0-9_]+):\?/g)].map(
    (m) => m[1]!,
  );
  const vars: Env = Object.fromEntries(
    required.map((k) => [k, `value-of-${k.toLowerCase()}-long-enough-for-a-secret`]),
  );

  it('lists every variable it requires in .env.example', () => {
    for (const k of new Set(required)) expect(example).toMatch(new RegExp(`^${k}=`, 'm'));
  });

  it('runs every role, two instances each, with an environment the config schema accepts', () => {
    const { services } = loadCompose(vars);
    const seen = new Map<string, number>();
    for (const [name, svc] of Object.entries(services)) {
      if (!(svc.build as { dockerfile?: string } | undefined)?.dockerfile) continue;
      expect((svc.build as { dockerfile: string }).dockerfile).toBe('deploy/Dockerfile');
      const role = roleOf(['node', 'main.ts', ...(svc.command as string[])]);
      seen.set(role, (seen.get(role) ?? 0) + ((svc.deploy as { replicas?: number } | undefined)?.replicas ?? 1));
      const env = Object.fromEntries(Object.entries(svc.environment as Env).map(([k, v]) => [k, String(v)]));
      // The image's own ENV (bind addresses, ports) applies under the service's.
      const config = checkProcessEnv(
        { HOST: '0.0.0.0', TESSERA_SUBGRAPH_PORT: '4000', TESSERA_ROUTER_PORT: '4100', ...env },
        role,
        `compose service ${name}`,
      );
      // Whatever a process reaches by name is a service of this file, on the port its role listens on.
      for (const url of config.subgraphUrls.split(',').map((p) => new URL(p.split('=')[1]!))) {
        expect(Object.keys(services)).toContain(url.hostname);
        expect(url.port).toBe('4000');
        expect(((services[url.hostname]!.command as string[])[1] ?? '').replace(/^subgraph:/, '')).toBe(url.hostname);
      }
      expect(new URL(config.routerUrl!).hostname).toBe('router');
      expect(new URL(config.routerUrl!).port).toBe('4100');
      const dbHost = new URL(config.databaseUrl!).hostname;
      expect(Object.keys(services)).toContain(dbHost);
      if (config.s3Endpoint) expect(Object.keys(services)).toContain(new URL(config.s3Endpoint).hostname);
      if (config.smtpUrl) expect(Object.keys(services)).toContain(new URL(config.smtpUrl).hostname);
      if (config.schedulerUrl) expect(Object.keys(services)).toContain(new URL(config.schedulerUrl).hostname);
      for (const dep of Object.keys(svc.depends_on as object)) expect(Object.keys(services)).toContain(dep);
    }
    for (const role of ROLES) expect({ role, instances: seen.get(role) ?? 0 }).toEqual({ role, instances: 2 });
  });

  it('has PostgreSQL with pgvector, MinIO, Mailpit, MongoDB and a TLS reverse proxy whose upstream is the front door', () => {
    const { services } = loadCompose(vars);
    expect(String(services.postgres!.image)).toMatch(/pgvector/);
    expect(String(services.minio!.image)).toMatch(/minio/);
    expect(String(services.mailpit!.image)).toMatch(/mailpit/);
    expect(String(services.mongo!.image)).toMatch(/^mongo:/);
    for (const mount of [...(services.postgres!.volumes as string[]), ...(services.proxy!.volumes as string[])]) {
      const [src] = mount.split(':');
      if (src!.startsWith('./')) expect(fs.existsSync(path.join(DEPLOY, src!))).toBe(true);
    }
    const caddy = fs.readFileSync(path.join(DEPLOY, 'proxy', 'Caddyfile'), 'utf8');
    expect(caddy).toMatch(/name front-door\s+port 8080/);
    expect(caddy).toMatch(/tls \{\$TESSERA_TLS:internal\}/);
    expect(caddy).toMatch(/flush_interval -1/);
    expect(caddy).toMatch(/max_size \d+GB/);
    expect(caddy).toMatch(/health_uri \/livez/);
  });

  it("pins every image to a version and limits every service's CPU and memory", () => {
    const { services } = loadCompose(vars);
    for (const [name, svc] of Object.entries(services)) {
      const limits = (svc.deploy as { resources?: { limits?: { cpus?: string; memory?: string } } } | undefined)
        ?.resources?.limits;
      if (name !== 'minio-bucket') {
        // (the one-shot bucket set-up runs for seconds)
        expect({ name, memory: /^\d+[MG]$/.test(String(limits?.memory)) }).toEqual({ name, memory: true });
        expect({ name, cpus: Number(limits?.cpus) > 0 }).toEqual({ name, cpus: true });
      }
      if (svc.build) continue; // Tessera's own image: TESSERA_IMAGE
      const image = String(svc.image);
      const tag = image.split(':')[1] ?? '';
      // A tag naming a version (digits and dots, or MinIO's RELEASE.<date>), never latest or a bare major version.
      expect({ name, image, pinned: /\d+\.\d+/.test(tag) || /^RELEASE\.\d{4}-/.test(tag) }).toEqual({
        name,
        image,
        pinned: true,
      });
    }
  });

  it("gives Tessera S3 keys of its own, not MinIO's root credentials", () => {
    const { services } = loadCompose(vars);
    const minio = services.minio!.environment as Env;
    for (const [name, svc] of Object.entries(services)) {
      if (!svc.build) continue;
      const env = svc.environment as Env;
      expect({ name, user: env.TESSERA_S3_ACCESS_KEY_ID }).not.toEqual({ name, user: minio.MINIO_ROOT_USER });
      expect(env.TESSERA_S3_SECRET_ACCESS_KEY).not.toBe(minio.MINIO_ROOT_PASSWORD);
      // The one-shot set-up creates that user with the same secret, and a policy limited to the bucket.
      const setup = (services['minio-bucket']!.entrypoint as string[]).join('\n');
      expect(setup).toContain(`mc admin user add local ${env.TESSERA_S3_ACCESS_KEY_ID} "$TESSERA_S3_SECRET"`);
      expect((services['minio-bucket']!.environment as Env).TESSERA_S3_SECRET).toBe(env.TESSERA_S3_SECRET_ACCESS_KEY);
      expect(setup).toContain(`arn:aws:s3:::${env.TESSERA_S3_BUCKET}/*`);
      expect(setup).toMatch(new RegExp(`mc admin policy attach local \\S+ --user ${env.TESSERA_S3_ACCESS_KEY_ID}`));
      expect(setup).toContain(`mc alias set local http://minio:9000 ${minio.MINIO_ROOT_USER} "$MINIO_ROOT_PASSWORD"`);
    }
  });

  it("fits every process's connections into PostgreSQL's max_connections", () => {
    const { services } = loadCompose(vars);
    const pgArgs = (services.postgres!.command as string[]).join(' ');
    const maxConnections = Number(/max_connections=(\d+)/.exec(pgArgs)?.[1]);
    const superuserReserved = Number(/superuser_reserved_connections=(\d+)/.exec(pgArgs)?.[1] ?? 3);
    /** The platform's own connections of one process (its pool, listeners, scheduler), as the README sizes them. */
    const PLATFORM_PER_PROCESS = 5;
    let needed = superuserReserved;
    for (const svc of Object.values(services)) {
      if (!svc.build) continue;
      const replicas = (svc.deploy as { replicas?: number }).replicas ?? 1;
      const env = Object.fromEntries(Object.entries(svc.environment as Env).map(([k, v]) => [k, String(v)]));
      const role = (svc.command as string[])[1];
      needed += replicas * PLATFORM_PER_PROCESS;
      if (role === 'subgraph:data') needed += replicas * loadConfig(env).dataMaxConnections;
    }
    expect(needed).toBeLessThanOrEqual(maxConnections);
  });

  it("shows a second project server, set up like the first, that holds every data replica's budget there", () => {
    const { services } = loadCompose(vars);
    const second = services['postgres-2']!;
    expect(second.image).toBe(services.postgres!.image);
    expect(second.volumes).toContain('./postgres/init.sh:/docker-entrypoint-initdb.d/10-tessera.sh:ro');
    // Its own passwords, not the first server's.
    const env = second.environment as Env;
    expect(env.POSTGRES_PASSWORD).not.toBe((services.postgres!.environment as Env).POSTGRES_PASSWORD);
    expect(env.TESSERA_DB_PASSWORD).not.toBe((services.postgres!.environment as Env).TESSERA_DB_PASSWORD);
    // Each data replica keeps a connection budget of its own on every project server (plus its provisioning pool).
    const maxConnections = Number(/max_connections=(\d+)/.exec((second.command as string[]).join(' '))?.[1]);
    const data = services.data!;
    const replicas = (data.deploy as { replicas?: number }).replicas ?? 1;
    const budget = loadConfig(
      Object.fromEntries(Object.entries(data.environment as Env).map(([k, v]) => [k, String(v)])),
    ).dataMaxConnections;
    expect(replicas * (budget + 4) + 3).toBeLessThanOrEqual(maxConnections);
    // How the operator registers it is written where the operator looks.
    const compose = fs.readFileSync(path.join(DEPLOY, 'compose.yaml'), 'utf8');
    expect(compose).toMatch(
      /tessera admin servers add pg2[\s\\#]+--database-url "postgres:\/\/tessera:\$TESSERA_DB2_PASSWORD@postgres-2:5432\/postgres"/,
    );
  });
});

type K8sObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; annotations?: Env };
  spec?: Record<string, unknown>;
  data?: Env;
  stringData?: Env;
};

function render(overlay: string): K8sObject[] {
  const out = execFileSync('kubectl', ['kustomize', path.join(DEPLOY, 'kubernetes', 'overlays', overlay)], {
    encoding: 'utf8',
  });
  return parseAllDocuments(out)
    .map((d) => d.toJSON() as K8sObject)
    .filter(Boolean);
}

/** Validates an object with the kubernetes-models class of its apiVersion and kind (the Kubernetes OpenAPI schemas). */
async function validate(obj: K8sObject): Promise<void> {
  const [group, version] = obj.apiVersion.includes('/') ? obj.apiVersion.split('/') : [undefined, obj.apiVersion];
  const mod = (await import(`kubernetes-models/${group ? `${group}/` : ''}${version}/${obj.kind}`)) as Record<
    string,
    new (o: unknown) => { validate: () => void }
  >;
  const Model = mod[obj.kind] ?? mod.default!;
  new Model(obj).validate();
}

describe.each(['production', 'development'])('deploy/kubernetes/overlays/%s', (overlay) => {
  const objects = render(overlay);
  const byKind = (kind: string) => objects.filter((o) => o.kind === kind);

  it('renders objects that all validate against the Kubernetes schemas', async () => {
    expect(objects.length).toBeGreaterThan(20);
    for (const obj of objects) {
      try {
        await validate(obj);
      } catch (err) {
        throw new Error(`${obj.kind}/${obj.metadata.name}: ${(err as Error).message}`, { cause: err });
      }
    }
  });

  it('has a Deployment per role with probes on its health routes, and a Service, an HPA and a PodDisruptionBudget for each', () => {
    const config = byKind('ConfigMap')[0]!.data!;
    const secret = byKind('Secret')[0];
    if (overlay === 'production')
      expect(secret).toBeUndefined(); // the placeholder never reaches production
    else expect(Object.values(secret!.stringData!).join(' ')).toMatch(/CHANGE-ME/);
    const secretKeys = Object.keys(secret?.stringData ?? { TESSERA_INTERNAL_SECRET: '', DATABASE_URL: '' });
    const seen: string[] = [];
    for (const d of byKind('Deployment')) {
      const pod = (
        d.spec!.template as {
          spec: {
            containers: {
              args: string[];
              envFrom: { configMapRef?: { name: string }; secretRef?: { name: string } }[];
              ports: { containerPort: number }[];
              readinessProbe: { httpGet: { path: string } };
              livenessProbe: { httpGet: { path: string } };
            }[];
          };
        }
      ).spec;
      const c = pod.containers[0]!;
      const role = roleOf(['node', 'main.ts', ...c.args]);
      seen.push(role);
      const env: Env = { HOST: '0.0.0.0', TESSERA_SUBGRAPH_PORT: '4000', TESSERA_ROUTER_PORT: '4100', ...config };
      for (const k of secretKeys)
        env[k] =
          secret?.stringData?.[k] ??
          (k === 'DATABASE_URL'
            ? 'postgres://tessera:x@db:5432/tessera'
            : 'a-secret-of-at-least-thirty-two-characters');
      const parsed = checkProcessEnv(env, role, `${overlay} ${d.metadata.name}`);
      const port = role === 'front-door' ? parsed.port : role === 'router' ? parsed.routerPort : parsed.subgraphPort;
      expect(c.ports[0]!.containerPort).toBe(port);
      expect(c.livenessProbe.httpGet.path).toBe('/livez');
      expect(['/livez', '/readyz']).toContain(c.readinessProbe.httpGet.path);
      expect(c.envFrom.map((e) => e.configMapRef?.name ?? e.secretRef?.name).sort()).toEqual(
        [byKind('ConfigMap')[0]!.metadata.name, 'tessera-secrets'].sort(),
      );
      for (const kind of ['Service', 'HorizontalPodAutoscaler', 'PodDisruptionBudget'])
        expect(byKind(kind).map((o) => o.metadata.name)).toContain(d.metadata.name);
      // Subgraph routing URLs name Services of this deployment, on the port their pods listen on.
      for (const url of parsed.subgraphUrls.split(',').map((p) => new URL(p.split('=')[1]!)))
        expect(byKind('Service').map((s) => s.metadata.name)).toContain(url.hostname);
    }
    expect(seen.sort()).toEqual([...ROLES].sort());
    const ingress = byKind('Ingress')[0]!;
    const backend = JSON.stringify(ingress.spec);
    expect(backend).toContain('"name":"tessera-front-door"');
    expect(JSON.stringify(ingress.spec)).toContain('"secretName":"tessera-tls"');
  });

  it('keeps /metrics off the public Ingress without snippet annotations (refused by ingress-nginx 1.9+)', () => {
    for (const ing of byKind('Ingress')) {
      const annotations = ing.metadata.annotations ?? {};
      expect(Object.keys(annotations).filter((k) => /snippet/.test(k))).toEqual([]);
    }
    const metrics = byKind('Ingress').filter((i) => JSON.stringify(i.spec).includes('"path":"/metrics"'));
    expect(metrics).toHaveLength(1);
    const rule = (metrics[0]!.spec as { rules: { http: { paths: { path: string; pathType: string }[] } }[] }).rules[0]!;
    expect(rule.http.paths).toEqual([expect.objectContaining({ path: '/metrics', pathType: 'Exact' })]);
    expect(metrics[0]!.metadata.annotations?.['nginx.ingress.kubernetes.io/denylist-source-range']).toBe(
      '0.0.0.0/0,::/0',
    );
    // Same host as the public Ingress, so ingress-nginx merges it into that server.
    const publicHost = (byKind('Ingress').find((i) => i !== metrics[0])!.spec as { rules: { host: string }[] })
      .rules[0]!.host;
    expect((metrics[0]!.spec as { rules: { host: string }[] }).rules[0]!.host).toBe(publicHost);
  });

  it('has NetworkPolicies letting only Tessera pods, the ingress controller (front doors) and the scraper reach a pod', () => {
    type Peer = { podSelector?: { matchLabels?: Env }; namespaceSelector?: { matchLabels?: Env } };
    type Policy = {
      podSelector: { matchLabels?: Env; matchExpressions?: { key: string; operator: string; values: string[] }[] };
      policyTypes: string[];
      ingress: { from: Peer[]; ports: { port: number }[] }[];
    };
    const policies = byKind('NetworkPolicy').map((p) => p.spec as unknown as Policy);
    const selects = (p: Policy, labels: Env) =>
      Object.entries(p.podSelector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
      (p.podSelector.matchExpressions ?? []).every((e) =>
        e.operator === 'NotIn' ? !e.values.includes(labels[e.key]!) : e.values.includes(labels[e.key]!),
      );
    for (const d of byKind('Deployment')) {
      const tpl = d.spec!.template as {
        metadata: { labels: Env };
        spec: { containers: { ports: { containerPort: number }[] }[] };
      };
      const labels = tpl.metadata.labels;
      const port = tpl.spec.containers[0]!.ports[0]!.containerPort;
      const mine = policies.filter((p) => selects(p, labels));
      expect({ deployment: d.metadata.name, policies: mine.length }).toEqual({
        deployment: d.metadata.name,
        policies: 1,
      });
      const policy = mine[0]!;
      expect(policy.policyTypes).toContain('Ingress');
      const rules = policy.ingress.filter((r) => r.ports.some((p) => p.port === port));
      expect(rules.length).toBeGreaterThan(0);
      const peers = rules.flatMap((r) => r.from);
      // Nobody may come from everywhere: every peer names pods or a namespace.
      for (const peer of peers)
        expect(Boolean(peer.podSelector?.matchLabels) || Boolean(peer.namespaceSelector?.matchLabels)).toBe(true);
      const namespaces = peers.flatMap((p) => Object.values(p.namespaceSelector?.matchLabels ?? {}));
      expect(namespaces).toContain('monitoring'); // the scraper
      // The ingress controller reaches the front doors only; Tessera's own pods reach every pod, whose labels match.
      if (labels['app.kubernetes.io/component'] === 'front-door') expect(namespaces).toContain('ingress-nginx');
      else expect(namespaces).not.toContain('ingress-nginx');
      expect(labels['app.kubernetes.io/part-of']).toBe('tessera');
      expect(peers).toContainEqual({ podSelector: { matchLabels: { 'app.kubernetes.io/part-of': 'tessera' } } });
    }
  });
});
