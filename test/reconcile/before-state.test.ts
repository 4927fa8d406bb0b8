// before.json (before-state.ts): every provider of the registry is asked for
// its fields, from what the plan observed when a planned resource did, else
// read from the running host. The host is a temp root treated as live, its
// /proc files written by hand in the kernel's formats (proc(5): meminfo in
// kB; /proc/net/tcp's local_address as hex IP:port, st 0A = LISTEN;
// /proc/modules one module per line), so each expected field is read off the
// fixture by eye.
import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../src/host.js';
import { HostError } from '../../src/errors.js';
import { observeBeforeState } from '../../src/reconcile/before-state.js';
import type { Plan } from '../../src/reconcile/plan.js';
import type { HostFacts } from '../../src/resources/types.js';
import type { AnyProvider } from '../../src/resources/index.js';
import { buildTree, type Tree } from '../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
function host(files: Tree, live = true): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'before-state-'));
  roots.push(root);
  buildTree(root, files);
  return new Host({ root, live });
}
const NO_PLAN: Plan = { live: true, root: '/', resources: [] };
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';
const tcpLine = (sl: number, local: string, st: string) =>
  `   ${sl}: ${local} 00000000:0000 ${st} 00000000:00000000 00:00000000 00000000     0        0 ${1000 + sl} 1 0000000000000000 100 0 0 10 0\n`;

describe('observeBeforeState with the shipped registry', () => {
  it('reads the running host when no planned resource observed it: swap, ip_forward, br_netfilter, the busy control-plane ports', async () => {
    const h = host({
      'proc/meminfo': 'MemTotal:        2009120 kB\nSwapTotal:       1048572 kB\nSwapFree:        1048572 kB\n',
      'proc/sys/net/ipv4/ip_forward': '1\n',
      'proc/modules':
        'overlay 151552 0 - Live 0x0000000000000000\nbr_netfilter 32768 0 - Live 0x0000000000000000\nbridge 311296 1 br_netfilter, Live 0x0000000000000000\n',
      // 6443 (0x192B) listening on 0.0.0.0, 10250 (0x280A) only connected (01 = ESTABLISHED), 2379 (0x094B) on 127.0.0.1.
      'proc/net/tcp': TCP_HEADER + tcpLine(0, '00000000:192B', '0A') + tcpLine(1, '0100007F:280A', '01') + tcpLine(2, '0100007F:094B', '0A'),
      'proc/net/tcp6': TCP_HEADER,
    });
    expect(await observeBeforeState(h, NO_PLAN)).toEqual({ swap_total_kb: 1048572, ip_forward: 1, br_netfilter: true, busy_ports: [2379, 6443] });
  });

  it('a host without swap, forwarding off, no bridge module and nothing listening', async () => {
    const h = host({
      'proc/meminfo': 'MemTotal:        2009120 kB\nSwapTotal:             0 kB\n',
      'proc/sys/net/ipv4/ip_forward': '0\n',
      'proc/modules': 'overlay 151552 0 - Live 0x0000000000000000\n',
      'proc/net/tcp': TCP_HEADER,
      'proc/net/tcp6': TCP_HEADER,
    });
    expect(await observeBeforeState(h, NO_PLAN)).toEqual({ swap_total_kb: 0, ip_forward: 0, br_netfilter: false, busy_ports: [] });
  });

  it('offline it refuses: there is no running kernel to describe', async () => {
    await expect(observeBeforeState(host({}, false), NO_PLAN)).rejects.toBeInstanceOf(HostError);
    await expect(observeBeforeState(host({}, false), NO_PLAN)).rejects.toThrow('the before-state needs a running host');
  });
});

describe('observeBeforeState over a registry it is given', () => {
  const reading = (field: string): AnyProvider =>
    ({
      type: field,
      after: [],
      observe: async () => null,
      diff: () => [],
      apply: async () => undefined,
      beforeState: async (_h: unknown, seen: HostFacts) => ({ [field]: seen.swapTotalKb ?? -1 }),
    }) as unknown as AnyProvider;

  it('asks every provider with the trait, in registry order, with the facts the plan observed', async () => {
    const observer = { ...reading('unused'), beforeState: undefined, facts: () => ({ swapTotalKb: 4096 }) } as unknown as AnyProvider;
    const plan = { live: true, root: '/', resources: [{ name: 'o', spec: { type: 'O' }, provider: observer, observed: null, changes: [] }] } as unknown as Plan;
    const registry = { B: reading('b_field'), O: observer, A: reading('a_field') };
    const got = await observeBeforeState(host({}), plan, registry);
    expect(got).toEqual({ b_field: 4096, a_field: 4096 });
    expect(Object.keys(got)).toEqual(['b_field', 'a_field']);
    expect(await observeBeforeState(host({}), NO_PLAN, registry)).toEqual({ b_field: -1, a_field: -1 });
  });
});
