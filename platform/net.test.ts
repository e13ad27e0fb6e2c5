import fs from 'node:fs';
import net from 'node:net';
import { describe, expect, it } from '@jest/globals';
import { freePort } from './net.ts';

const ephemeralLow = Number(fs.readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);

describe('freePort', () => {
  it('hands out ports below the ephemeral range (where outgoing connections take theirs), never the same twice', async () => {
    const ports: number[] = [];
    for (let i = 0; i < 200; i++) ports.push(await freePort());
    expect(new Set(ports).size).toBe(200);
    expect(ports.filter((p) => p < 10_000 || p >= ephemeralLow)).toEqual([]);
  });

  it('hands out a port that can be listened on', async () => {
    const port = await freePort();
    const srv = net.createServer();
    await new Promise<void>((resolve, reject) => {
      srv.once('error', reject);
      srv.listen(port, '127.0.0.1', resolve);
    });
    expect((srv.address() as net.AddressInfo).port).toBe(port);
    await new Promise((r) => srv.close(r));
  });
});
