// Stops the embedded PostgreSQL of the global setup.
export default async function globalTeardown(): Promise<void> {
  await globalThis.__tesseraTestPg?.stop();
}
