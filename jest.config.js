import { assertNodeVersion } from './tests/support/node-version-guard.js';

assertNodeVersion();

const testRoots = ['tests', 'platform', 'subgraphs', 'router', 'rest-compat'];

/** @type {import('jest').Config} */
const config = {
  testEnvironment: 'node',
  // Sources are TypeScript with `.ts` import specifiers, run as native ESM
  // (NODE_OPTIONS=--experimental-vm-modules, set by `npm test`).
  transform: { '\\.ts$': '<rootDir>/tests/support/strip-types.cjs' },
  extensionsToTreatAsEsm: ['.ts'],
  moduleFileExtensions: ['ts', 'js', 'mjs', 'cjs', 'json', 'node'],
  testMatch: testRoots.map((dir) => `<rootDir>/${dir}/**/*.test.ts`),
  testPathIgnorePatterns: ['/node_modules/', '<rootDir>/.tessera/'],
  modulePathIgnorePatterns: ['<rootDir>/.tessera/', '<rootDir>/coverage/', '<rootDir>/bench/out/'],
  watchPathIgnorePatterns: ['<rootDir>/.tessera/', '<rootDir>/coverage/'],
  testTimeout: 30_000,
  // Agenda 6 leaves a lock-check timer (lockLifetime / 2) pending after every job it ran, which keeps a
  // worker alive for minutes after its tests finished; the platform itself exits through process.exit.
  forceExit: true,
  maxWorkers: 2,
  // One embedded PostgreSQL for the run; each test file makes its own database on it.
  globalSetup: '<rootDir>/tests/support/global-setup.ts',
  globalTeardown: '<rootDir>/tests/support/global-teardown.ts',
  reporters: ['default', '<rootDir>/tests/support/ci-line-reporter.cjs'],
};

export default config;
