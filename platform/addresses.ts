// Which IP addresses are public: the functions domain refuses outbound connections to any other (outbound.ts), and
// the front door serves /metrics without a token only to the others (the machine itself and private networks).
import ipaddr from 'ipaddr.js';

/**
 * The IPv4 address an IPv6 address carries, for the transition forms that reach it: IPv4-compatible, mapped and
 * translated (`::a.b.c.d`, `::ffff:a.b.c.d`, `::ffff:0:a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`), 6to4 (`2002:AABB:CCDD::`) and Teredo (server
 * in bits 32-63, client in the last 32 bits inverted). Teredo carries two; each must be public.
 */
function embeddedIPv4(v6: ipaddr.IPv6, range: string): ipaddr.IPv4[] {
  const w = v6.parts;
  const v4 = (hi: number, lo: number) => new ipaddr.IPv4([hi >> 8, hi & 255, lo >> 8, lo & 255]);
  // The deprecated IPv4-compatible form (`::a.b.c.d`, ::/96) is treated as reaching its IPv4 address too.
  if (w.slice(0, 6).every((x) => x === 0)) return [v4(w[6]!, w[7]!)];
  switch (range) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return [v4(w[6]!, w[7]!)];
    case 'rfc6052':
      return w[2] === 0 ? [v4(w[6]!, w[7]!)] : []; // the local-use /48 prefix (64:ff9b:1::) is refused as a whole below
    case '6to4':
      return [v4(w[1]!, w[2]!)];
    case 'teredo':
      return [v4(w[2]!, w[3]!), v4(~w[6]! & 0xffff, ~w[7]! & 0xffff)];
    default:
      return [];
  }
}

/**
 * True when `address` (an IP literal) is anything but a public unicast address: loopback, private, link-local,
 * CGNAT, reserved, documentation, benchmarking, multicast, unique-local... (ipaddr.js ranges), or an IPv6 address
 * whose transition form (6to4, Teredo, NAT64, IPv4-mapped) carries such an IPv4 address. Anything unparsable too.
 */
export function isNonPublicAddress(address: string): boolean {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address);
  } catch {
    return true;
  }
  if (parsed.kind() === 'ipv4') return (parsed as ipaddr.IPv4).range() !== 'unicast';
  const v6 = parsed as ipaddr.IPv6;
  const range = v6.range();
  const inner = embeddedIPv4(v6, range);
  if (inner.length > 0) return inner.some((a) => a.range() !== 'unicast');
  // 6to4, Teredo and NAT64 reach the IPv4 they carry, checked above; every other special range is refused.
  return range !== 'unicast';
}
