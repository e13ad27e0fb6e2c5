// Fails fast when Jest runs on the machine's older Node instead of the Node 24
// that the `node` devDependency puts first on PATH inside npm scripts.
const REQUIRED_MAJOR = 24;

export function assertNodeVersion() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < REQUIRED_MAJOR) {
    throw new Error(
      `Node ${process.versions.node} is running the tests, but Node >= ${REQUIRED_MAJOR} is required: ` +
        'run through npm test so Node 24 from node_modules is used.',
    );
  }
}
