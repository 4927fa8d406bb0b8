// Listening TCP sockets from /proc/net/tcp{,6}. Shared by the before-state
// (busy_ports) and the PortFree provider, which maps inodes to processes.
import type { TargetFs } from '../host.js';

export type Family = 'ipv4' | 'ipv6';

export interface Listener {
  family: Family;
  /** Printable local address: "0.0.0.0", "127.0.0.1", "::", "::1". */
  address: string;
  port: number;
  /** Socket inode, the key to /proc/PID/fd links "socket:[INODE]". */
  inode: number;
}

const TCP_LISTEN = '0A';

/** /proc/net/tcp stores each 32-bit word in host (little-endian) byte order. */
function hexToIPv4(hex: string): string {
  const n = hex.match(/../g)!.map((b) => parseInt(b, 16));
  return n.reverse().join('.');
}

function hexToIPv6(hex: string): string {
  const words: string[] = [];
  for (let i = 0; i < 32; i += 8) {
    const le = hex
      .slice(i, i + 8)
      .match(/../g)!
      .reverse()
      .join('');
    words.push(le.slice(0, 4), le.slice(4, 8));
  }
  const groups = words.map((w) => parseInt(w, 16).toString(16));
  // Collapse the longest run of zero groups (RFC 5952).
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

/** LISTEN entries of one /proc/net/tcp or tcp6 file. */
export function parseProcNetTcp(text: string, family: Family): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== TCP_LISTEN) continue;
    const [addrHex, portHex] = f[1]!.split(':');
    if (!addrHex || !portHex) continue;
    out.push({
      family,
      address: family === 'ipv4' ? hexToIPv4(addrHex) : hexToIPv6(addrHex),
      port: parseInt(portHex, 16),
      inode: Number(f[9]),
    });
  }
  return out;
}

/** Live only: every TCP listener, IPv4 and IPv6. */
export async function readListeners(host: TargetFs): Promise<Listener[]> {
  host.assertLive('listening sockets');
  const v4 = (await host.readKernel('/proc/net/tcp')) ?? '';
  const v6 = (await host.readKernel('/proc/net/tcp6')) ?? '';
  return [...parseProcNetTcp(v4, 'ipv4'), ...parseProcNetTcp(v6, 'ipv6')];
}

/** Ascending, distinct ports among `wanted` that have a listener. */
export function busyPorts(listeners: Listener[], wanted: number[]): number[] {
  const want = new Set(wanted);
  return [...new Set(listeners.filter((l) => want.has(l.port)).map((l) => l.port))].sort((a, b) => a - b);
}

/** A UDP socket bound to a local port and connected to no peer (state 07 in /proc/net/udp): one that receives datagrams. */
const UDP_UNCONNECTED = '07';

/** Bound, unconnected entries of one /proc/net/udp or udp6 file (a UDP server's sockets). */
export function parseProcNetUdp(text: string, family: Family): Listener[] {
  const out: Listener[] = [];
  for (const line of text.split('\n').slice(1)) {
    const f = line.trim().split(/\s+/);
    if (f.length < 10 || f[3] !== UDP_UNCONNECTED) continue;
    const [addrHex, portHex] = f[1]!.split(':');
    if (!addrHex || !portHex || parseInt(portHex, 16) === 0) continue;
    out.push({ family, address: family === 'ipv4' ? hexToIPv4(addrHex) : hexToIPv6(addrHex), port: parseInt(portHex, 16), inode: Number(f[9]) });
  }
  return out;
}

/** Live only: every bound UDP socket, IPv4 and IPv6 (what else a server such as inetd answers on). */
export async function readUdpSockets(host: TargetFs): Promise<Listener[]> {
  host.assertLive('UDP sockets');
  const v4 = (await host.readKernel('/proc/net/udp')) ?? '';
  const v6 = (await host.readKernel('/proc/net/udp6')) ?? '';
  return [...parseProcNetUdp(v4, 'ipv4'), ...parseProcNetUdp(v6, 'ipv6')];
}
