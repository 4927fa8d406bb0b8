// Listening TCP sockets from /proc/net/tcp and tcp6. The oracle is the
// kernel: a python process in a network namespace of our own (unshare -rn)
// listens on chosen addresses (IP_FREEBIND, so none needs configuring) and
// the kernel's tables are read back; python's inet_ntop prints the addresses
// (RFC 5952 for IPv6). Plus lines this kernel printed, kept as text.
import { afterAll, describe, expect, it } from 'vitest';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { busyPorts, parseProcNetTcp, readListeners } from '../../src/observe/listeners.js';
import { buildTree } from '../helpers/tree.js';

const work = mkdtempSync(path.join(tmpdir(), 'listeners-'));
afterAll(() => rmSync(work, { recursive: true, force: true }));

// Lines as this kernel prints them (captured from node:net listeners).
const TCP = [
  '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 0100007F:98EB 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34009 1 000000000f102193 100 0 0 10 0',
  '   1: 00000000:280A 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34008 1 00000000aa9868b1 100 0 0 10 0',
  // An established connection to 10250 is not a listener.
  '   2: 0100007F:280A 0100007F:D2F0 01 00000000:00000000 00:00000000 00000000     0        0 34100 1 0000000000000000 20 4 30 10 -1',
].join('\n');

const TCP6 = [
  '  sl  local_address                         remote_address                        st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode',
  '   0: 00000000000000000000000000000000:192B 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34013 1 00000000b8b17bbe 100 0 0 10 0',
  '   1: 00000000000000000000000001000000:0941 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34011 1 00000000b8945f91 100 0 0 10 0',
  '   2: 0000000000000000FFFF00000100007F:0944 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 34012 1 00000000a2e14740 100 0 0 10 0',
  '   3: 0000000000000000FFFF00000100007F:0944 0000000000000000FFFF00000100007F:9999 06 00000000:00000000 00:00000000 00000000     0        0 0 1 0000000000000000 20 4 30 10 -1',
].join('\n');

describe('/proc/net/tcp and tcp6', () => {
  it('reads IPv4 listeners: any and loopback-only, ignoring established sockets', () => {
    expect(parseProcNetTcp(TCP, 'ipv4')).toEqual([
      { family: 'ipv4', address: '127.0.0.1', port: 0x98eb, inode: 34009 },
      { family: 'ipv4', address: '0.0.0.0', port: 10250, inode: 34008 },
    ]);
  });

  it('reads IPv6 listeners: ::, ::1 and a v4-mapped address; TIME_WAIT is skipped', () => {
    expect(parseProcNetTcp(TCP6, 'ipv6')).toEqual([
      { family: 'ipv6', address: '::', port: 6443, inode: 34013 },
      { family: 'ipv6', address: '::1', port: 2369, inode: 34011 },
      { family: 'ipv6', address: '::ffff:7f00:1', port: 2372, inode: 34012 },
    ]);
  });

  it('busy ports come from both families, ascending, once each', () => {
    const all = [...parseProcNetTcp(TCP, 'ipv4'), ...parseProcNetTcp(TCP6, 'ipv6')];
    expect(busyPorts(all, [10259, 10250, 6443, 2379, 2369])).toEqual([2369, 6443, 10250]);
  });
});

describe('busy ports', () => {
  it('are the wanted ports some listener holds, once each whatever the family, ascending', () => {
    const listeners = [
      { family: 'ipv4' as const, address: '0.0.0.0', port: 10250, inode: 1 },
      { family: 'ipv6' as const, address: '::', port: 10250, inode: 2 },
      { family: 'ipv6' as const, address: '::1', port: 10240, inode: 3 },
      { family: 'ipv4' as const, address: '127.0.0.1', port: 3306, inode: 4 },
    ];
    expect(busyPorts(listeners, [10259, 10250, 6443, 10240])).toEqual([10240, 10250]);
  });
});

/** Listens on each address in a new network namespace; the kernel's tables and python's view of each socket. */
const LISTEN_PY = `
import socket, json
ADDRS = json.loads(__import__('sys').argv[1])
socks, want = [], []
for fam, addr, port in ADDRS:
    f = socket.AF_INET if fam == 'ipv4' else socket.AF_INET6
    s = socket.socket(f, socket.SOCK_STREAM)
    s.setsockopt(socket.SOL_IP, 15, 1)  # IP_FREEBIND
    if f == socket.AF_INET6: s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
    s.bind((addr, port) if f == socket.AF_INET else (addr, port, 0, 0))
    s.listen()
    socks.append(s)
    name = s.getsockname()
    want.append({'family': fam, 'address': name[0], 'port': name[1], 'inode': __import__('os').fstat(s.fileno()).st_ino})
c = socket.create_connection(('127.0.0.1', ADDRS[0][2]))  # an established pair, which is no listener
print(json.dumps({'want': want, 'tcp': open('/proc/net/tcp').read(), 'tcp6': open('/proc/net/tcp6').read()}))
`;

describe('parseProcNetTcp against the kernel, in a network namespace', () => {
  it('reads back every listener with its address as inet_ntop prints it, its port and its socket inode', () => {
    const addrs = [
      ['ipv4', '127.0.0.1', 10250],
      ['ipv4', '0.0.0.0', 6443],
      ['ipv4', '10.1.2.3', 2379],
      ['ipv6', '::', 10259],
      ['ipv6', '::1', 2380],
      ['ipv6', '2001:db8::1:0:0:1', 10257],
      ['ipv6', 'fd00:abcd::', 4000],
      ['ipv6', '1:0:0:2:0:0:0:3', 4001],
      ['ipv6', '2001:db8:0:1::', 4003],
    ];
    const r = spawnSync('unshare', ['-rn', 'sh', '-c', 'ip link set lo up && exec python3 -c "$0" "$1"', LISTEN_PY, JSON.stringify(addrs)], {
      encoding: 'utf8',
      timeout: 20_000,
    });
    expect(r.status, r.stderr).toBe(0);
    const k = JSON.parse(r.stdout) as { want: unknown[]; tcp: string; tcp6: string };
    const ours = [...parseProcNetTcp(k.tcp, 'ipv4'), ...parseProcNetTcp(k.tcp6, 'ipv6')];
    const key = (l: { family: string; port: number }) => `${l.family} ${l.port}`;
    expect([...ours].sort((a, b) => key(a).localeCompare(key(b)))).toEqual([...(k.want as typeof ours)].sort((a, b) => key(a).localeCompare(key(b))));
  });
});

describe('readListeners', () => {
  it('reads both tables of a live host', async () => {
    const root = mkdtempSync(path.join(work, 'root-'));
    buildTree(root, { 'proc/net/tcp': TCP, 'proc/net/tcp6': TCP6 });
    const l = await readListeners(new Host({ root, live: true }));
    expect(l.map((x) => `${x.family} ${x.address} ${x.port}`)).toEqual([
      'ipv4 127.0.0.1 39147',
      'ipv4 0.0.0.0 10250',
      'ipv6 :: 6443',
      'ipv6 ::1 2369',
      'ipv6 ::ffff:7f00:1 2372',
    ]);
  });
  it('refuses an image: no listener of the build machine reaches its plan', async () => {
    await expect(readListeners(new Host({ root: work }))).rejects.toThrow(/needs a running host/);
  });
});
