import { BlockList, isIP } from 'node:net';

// Which addresses are this machine's or its private networks' — where a fetch could reach local
// services (request forgery) — and which the config or the user allowed anyway.

const RANGES: [kind: string, range: string, bits: number, family: 'ipv4' | 'ipv6'][] = [
  ['loopback', '127.0.0.0', 8, 'ipv4'],
  ['loopback', '::1', 128, 'ipv6'],
  ['unspecified', '0.0.0.0', 8, 'ipv4'],
  ['unspecified', '::', 128, 'ipv6'],
  ['link-local', '169.254.0.0', 16, 'ipv4'],
  ['link-local', 'fe80::', 10, 'ipv6'],
  ['private', '10.0.0.0', 8, 'ipv4'],
  ['private', '172.16.0.0', 12, 'ipv4'],
  ['private', '192.168.0.0', 16, 'ipv4'],
  ['private', '100.64.0.0', 10, 'ipv4'],
  ['private', '198.18.0.0', 15, 'ipv4'],
  ['private', 'fc00::', 7, 'ipv6'],
];

const lists = new Map<string, BlockList>();
for (const [kind, range, bits, family] of RANGES) {
  const list = lists.get(kind) ?? new BlockList();
  list.addSubnet(range, bits, family);
  lists.set(kind, list);
}

/** `::ffff:10.0.0.1` → `10.0.0.1`: an IPv4 address written as IPv6 is judged as IPv4. */
const unmapped = (address: string): string => {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped?.[1] ?? address;
};

/** `loopback`, `link-local`, `private` or `unspecified` for such an address; null for others. */
export const privateKind = (address: string): string | null => {
  const plain = unmapped(address);
  const family = isIP(plain) === 6 ? 'ipv6' : 'ipv4';
  if (!isIP(plain)) return null;
  for (const [kind, list] of lists) if (list.check(plain, family)) return kind;
  return null;
};

/** True when `entry` (a host name, an address or a CIDR range) covers `host` or `address`. */
const covers = (entry: string, host: string, address: string): boolean => {
  const wanted = entry.trim().toLowerCase();
  if (wanted === host.toLowerCase() || wanted === address) return true;
  const [range, bits] = wanted.split('/');
  if (!range || bits === undefined || !isIP(range)) return false;
  const list = new BlockList();
  const family = isIP(range) === 6 ? 'ipv6' : 'ipv4';
  try {
    list.addSubnet(range, Number(bits), family);
  } catch {
    return false; // a malformed range covers nothing
  }
  const plain = unmapped(address);
  return isIP(plain) !== 0 && list.check(plain, isIP(plain) === 6 ? 'ipv6' : 'ipv4');
};

/** Why reaching `address` for `host` must be asked, or null when it may go ahead. */
export const privateReason = (
  host: string,
  address: string,
  allowed: readonly string[],
): { kind: string; address: string } | null => {
  const kind = privateKind(address);
  if (!kind || allowed.some((entry) => covers(entry, host, address))) return null;
  return { kind, address };
};
