// tests/support/port-owner.ts: a readiness probe answered on a port must come from the child that was started.
import net from 'node:net';
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { portOwnedBy } from '../support/port-owner.ts';

let server: net.Server;
let port: number;

beforeAll(async () => {
  server = net.createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  port = (server.address() as net.AddressInfo).port;
});
afterAll(async () => {
  await new Promise((r) => server.close(r));
});

describe('portOwnedBy', () => {
  it('knows a port this process listens on', () => {
    expect(portOwnedBy(process.pid, port)).toBe(true);
  });

  it('answers false for a process that does not listen on it (another process took the port)', async () => {
    const child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 5000)'], { stdio: 'ignore' });
    try {
      await new Promise((r) => setTimeout(r, 200));
      expect(portOwnedBy(child.pid!, port)).toBe(false);
    } finally {
      child.kill();
    }
  });

  it("finds a port a child's child listens on (a split launcher's processes)", async () => {
    // It ends by itself: killing the child does not end it.
    const grandchild = `setTimeout(() => process.exit(0), 3000); require('node:net').createServer().listen(0, '127.0.0.1', function () { console.log(this.address().port); })`;
    const child = spawn(
      process.execPath,
      [
        '-e',
        `require('node:child_process').spawn(process.execPath, ['-e', ${JSON.stringify(grandchild)}], { stdio: 'inherit' })`,
      ],
      { stdio: ['ignore', 'pipe', 'ignore'] },
    );
    try {
      const theirs = await new Promise<number>((r) =>
        child.stdout!.once('data', (d: Buffer) => r(Number(String(d).trim()))),
      );
      expect(portOwnedBy(child.pid!, theirs)).toBe(true);
      expect(portOwnedBy(child.pid!, port)).toBe(false);
    } finally {
      child.kill();
    }
  });
});
