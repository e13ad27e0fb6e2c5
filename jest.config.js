import { assertNodeVersion } from './tests/support/node-version-guard.js';

assertNodeVersion();

const testRoots = ['tests', 'platform', 'subgraphs', 'router', 'rest-compat'];

// Tiers (TESSERA_TEST_TIER; docs/testing.md says which to run when):
// - all (default, `npm test`): every test file.
// - quick (`npm run test:quick`): unit and integration tests, no started platform (the edit-test loop).
// - server (`npm run test:server`): what depends on the database server: the quick tier (every integration test talks
//   to PostgreSQL itself), start-up on the embedded default, and one end-to-end flow per domain. CI runs the whole
//   suite on PostgreSQL 15 and this tier on the embedded server.
const QUICK = [
  '<rootDir>/tests/unit/**/*.test.ts',
  '<rootDir>/tests/integration/**/*.test.ts',
  ...testRoots.filter((dir) => dir !== 'tests').map((dir) => `<rootDir>/${dir}/**/*.test.ts`),
];
const SERVER_E2E = [
  // start-up: the embedded server, one process, the backup tools against the server's own version
  'tests/e2e/platform/embedded-default.test.ts',
  'tests/e2e/platform/one-process.test.ts',
  'tests/e2e/platform/backup-restore.test.ts',
  // one flow per domain (tenant: one-process.test.ts's scenario)
  'tests/e2e/identity/identity-end-users.test.ts',
  'tests/e2e/data/data-actions.test.ts',
  'tests/e2e/data/data-vector-pgvector.test.ts',
  'tests/e2e/storage/storage-rest.test.ts',
  'tests/e2e/functions/functions-database.test.ts',
  // the SQL guard and the walls between projects, which lean on the server's catalog and privileges
  'tests/security/isolation.test.ts',
].map((file) => `<rootDir>/${file}`);

const TIERS = {
  all: testRoots.map((dir) => `<rootDir>/${dir}/**/*.test.ts`),
  quick: QUICK,
  server: [...QUICK, ...SERVER_E2E],
};
const tier = process.env.TESSERA_TEST_TIER || 'all';
if (!(tier in TIERS)) throw new Error(`TESSERA_TEST_TIER=${tier}: use ${Object.keys(TIERS).join(', ')}`);

/** @type {import('jest').Config} */
const config = {
  testEnvironment: 'node',
  // Sources are TypeScript with `.ts` import specifiers, run as native ESM
  // (NODE_OPTIONS=--experimental-vm-modules, set by `npm test`).
  transform: { '\\.ts$': '<rootDir>/tests/support/strip-types.cjs' },
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json', 'node'],
  testMatch: TIERS[tier],
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/.tessera/'],
  modulePathIgnorePatterns: ['<rootDir>/.tessera/', '<rootDir>/coverage/', '<rootDir>/bench/out/'],
  watchPathIgnorePatterns: ['<rootDir>/.tessera/', '<rootDir>/coverage/'],
  testTimeout: 30_000,
  // Agenda 6 leaves a lock-check timer (lockLifetime / 2) pending after every job it ran, which keeps a
  // worker alive for minutes after its tests finished; the platform itself exits through process.exit.
  forceExit: true,
  maxWorkers: 2,
  // A worker keeps what each test file's modules left behind (ESM in vm contexts is not collected between files): one
  // ran out of memory after ~120 files in a CI run. Jest restarts a worker whose heap is past this after a file.
  workerIdleMemoryLimit: '1536MB',
  // One embedded PostgreSQL for the run; each test file makes its own database on it.
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  reporters: ['default', '<rootDir>/tests/support/ci-line-reporter.cjs'],
};

export default config;
