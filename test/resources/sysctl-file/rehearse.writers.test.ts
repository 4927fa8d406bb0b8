// The rehearsal replays systemd-sysctl and sysctl --system, nothing else:
// its "at boot" figure says so, and names the other writers of the key at
// boot that the boot-script scan knows (a script's sysctl -w, a file a
// unit applies, a module removal), or "none known", or "unknown" when a
// line the scan cannot judge may write it. Over a real scan of fixture
// roots (rc.local, and ufw 0.36.2-1's own files enabled as `ufw enable`
// leaves them); the rehearsal's figures are hand-made, since running the
// programs is test/sysctl/rehearsal.test.ts's and rehearse.test.ts's part.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, cpSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { buildTree, type Tree } from '../../helpers/tree.js';
import { Host } from '../../../src/host.js';
import { scanBootScripts } from '../../../src/boot-scripts/scan.js';
import { rehearsalNotes } from '../../../src/resources/sysctl-file/rehearse.js';
import type { SysctlFileObserved, SysctlRehearsal } from '../../../src/resources/sysctl-file/observed.js';
import type { SysctlFileSpec } from '../../../src/resources/sysctl-file/spec.js';

const UFW = path.resolve('test/fixtures/debian-packages/ufw_0.36.2-1');
const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});

const spec: SysctlFileSpec = {
  type: 'SysctlFile',
  file: '/etc/sysctl.d/k8s.conf',
  settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1 },
  conflict_policy: 'resolve',
} as SysctlFileSpec;

const ran: SysctlRehearsal = {
  status: 'ran',
  ms: 40,
  runs: 2,
  programs: { boot: 'systemd-sysctl', system: 'sysctl --system' },
  notRehearsed: [],
  start: {},
  engine: { boot: { 'net.ipv4.ip_forward': '1' }, system: { 'net.ipv4.ip_forward': '1' } },
  enginePlan: { boot: { 'net.ipv4.ip_forward': '1' }, system: { 'net.ipv4.ip_forward': '1' } },
  culprits: [],
  final: {
    boot: { 'net.ipv4.ip_forward': '1', 'net.bridge.bridge-nf-call-iptables': '1' },
    system: { 'net.ipv4.ip_forward': '1', 'net.bridge.bridge-nf-call-iptables': '1' },
  },
  unexplained: [],
};

async function notes(tree: Tree, setup: (root: string) => void = () => {}): Promise<string[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'rehearse-writers-'));
  roots.push(root);
  setup(root);
  buildTree(root, { 'etc/fstab': 'UUID=1 / ext4 defaults 0 1\n', ...tree });
  if (tree['etc/rc.local'] !== undefined) chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  const bootScripts = await scanBootScripts(new Host({ root }));
  return rehearsalNotes(spec, { rehearsal: ran, bootScripts } as unknown as SysctlFileObserved).slice(1);
}

describe('the rehearsal names what it replayed and the other writers it did not', () => {
  it('none known', async () => {
    expect(await notes({})).toEqual([
      '  net.ipv4.ip_forward: at boot 1, after sysctl --system 1 (systemd-sysctl and sysctl --system replayed; other writers: none known)',
      '  net.bridge.bridge-nf-call-iptables: at boot 1, after sysctl --system 1 (systemd-sysctl and sysctl --system replayed; other writers: none known)',
    ]);
  });

  it("rc.local's sysctl -w and modprobe -r, and ufw's sysctl.conf: each named with its line, under the key it touches", async () => {
    const sysctl = readFileSync(path.join(UFW, 'etc/ufw/sysctl.conf'), 'utf8').replace('#net/ipv4/ip_forward=1\n', 'net/ipv4/ip_forward=1\n');
    const fwd = sysctl.split('\n').indexOf('net/ipv4/ip_forward=1') + 1;
    const ipt = readFileSync(path.join(UFW, 'etc/default/ufw'), 'utf8').split('\n').indexOf('IPT_SYSCTL=/etc/ufw/sysctl.conf') + 1;
    const got = await notes(
      {
        'etc/rc.local': '#!/bin/sh\nsysctl -w net.ipv4.conf.all.forwarding=1\nmodprobe -r br_netfilter\nexit 0\n',
        'etc/ufw/ufw.conf': 'ENABLED=yes\nLOGLEVEL=low\n',
        'etc/ufw/sysctl.conf': sysctl,
        'etc/systemd/system/multi-user.target.wants/ufw.service': { link: '/lib/systemd/system/ufw.service' },
      },
      (root) => cpSync(UFW, root, { recursive: true }),
    );
    expect(got).toEqual([
      `  net.ipv4.ip_forward: at boot 1, after sysctl --system 1 (systemd-sysctl and sysctl --system replayed; other writers: /etc/rc.local:2 sets net.ipv4.conf.all.forwarding = 1; /etc/default/ufw:${ipt} loads /etc/ufw/sysctl.conf:${fwd})`,
      '  net.bridge.bridge-nf-call-iptables: at boot 1, after sysctl --system 1 (systemd-sysctl and sysctl --system replayed; other writers: /etc/rc.local:3 removes br_netfilter)',
    ]);
  });

  it('a line the scan cannot judge: unknown', async () => {
    const got = await notes({ 'etc/rc.local': '#!/bin/sh\nsysctl -w "$KEY=0"\nexit 0\n' });
    expect(got[0]).toBe(
      '  net.ipv4.ip_forward: at boot 1, after sysctl --system 1 (systemd-sysctl and sysctl --system replayed; other writers: unknown, see the warnings)',
    );
  });
});
