// Which outbound addresses functions may reach by default.
import { describe, expect, it } from '@jest/globals';
import { resolveChecked } from './outbound.ts';
import { isNonPublicAddress } from '../../../platform/addresses.ts';

describe('outbound address check', () => {
  it.each([
    '127.0.0.1',
    '10.1.2.3',
    '172.20.0.1',
    '192.168.1.1',
    '169.254.169.254',
    '100.64.0.1',
    '0.0.0.0',
    '224.0.0.1',
    '::1',
    '::',
    'fe80::1',
    'fd00::1',
    '::ffff:127.0.0.1',
    '::ffff:7f00:1',
    '::ffff:a9fe:a9fe',
  ])('%s is refused', (addr) => expect(isNonPublicAddress(addr)).toBe(true));

  it.each([
    // IPv4 inside IPv6 transition addresses: 6to4 (2002:AABB:CCDD::), Teredo (server, and client inverted), NAT64, IPv4-compatible
    '2002:7f00:1::',
    '2002:a9fe:a9fe::1',
    '2002:a00:1::',
    '2001:0:4136:e378:8000:63bf:80ff:fffe',
    '2001:0:a00:1:8000:63bf:f7f7:f7f7',
    '64:ff9b::7f00:1',
    '64:ff9b::a9fe:a9fe',
    '64:ff9b:1::1',
    '::7f00:1',
    '::a9fe:a9fe',
    '::ffff:0:7f00:1',
    // documentation, benchmarking, discard, site-local, reserved and broadcast ranges
    '2001:db8::1',
    '2001:2::1',
    '100::1',
    'fec0::1',
    '192.0.2.1',
    '198.18.0.1',
    '240.0.0.1',
    '255.255.255.255',
    'not an address',
  ])('%s is refused', (addr) => expect(isNonPublicAddress(addr)).toBe(true));

  it.each([
    '93.184.216.34',
    '8.8.8.8',
    '2606:4700:4700::1111',
    '::ffff:8.8.8.8',
    '2002:808:808::',
    '2001:0:4136:e378:8000:63bf:f7f7:f7f7',
    '64:ff9b::808:808',
  ])('%s is allowed', (addr) => expect(isNonPublicAddress(addr)).toBe(false));

  it('checks every address a host name resolves to', async () => {
    await expect(resolveChecked('localhost', false)).rejects.toThrow(/loopback, private or link-local/);
    await expect(resolveChecked('[::1]', false)).rejects.toThrow(/::1/);
    await expect(resolveChecked('localhost', true)).resolves.not.toHaveLength(0);
  });
});
