// Which outbound addresses functions may reach by default.
import { describe, expect, it } from '@jest/globals';
import { isNonPublicAddress, resolveChecked } from './outbound.ts';

describe('outbound address check', () => {
  it.each(['127.0.0.1', '10.1.2.3', '172.20.0.1', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '::1', '::', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::ffff:7f00:1', '::ffff:a9fe:a9fe'])(
    '%s is refused',
    (addr) => expect(isNonPublicAddress(addr)).toBe(true),
  );

  it.each(['93.184.216.34', '8.8.8.8', '2606:4700:4700::1111', '::ffff:8.8.8.8'])('%s is allowed', (addr) => expect(isNonPublicAddress(addr)).toBe(false));

  it('checks every address a host name resolves to', async () => {
    await expect(resolveChecked('localhost', false)).rejects.toThrow(/loopback, private or link-local/);
    await expect(resolveChecked('[::1]', false)).rejects.toThrow(/::1/);
    await expect(resolveChecked('localhost', true)).resolves.not.toHaveLength(0);
  });
});
