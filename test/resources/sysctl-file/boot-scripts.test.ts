// What a boot script can do to SysctlFile (sysctl-file/boot-scripts.ts): a `sysctl -w` or a `sysctl -p
// FILE` that leaves a wanted key at another value (directly, or through a key the kernel couples with
// it: writing net.ipv4.conf.all.forwarding sets net.ipv4.ip_forward, devinet_sysctl_forward), and a
// module removal that takes net.bridge.* away (those keys exist only while br_netfilter is loaded).
// The lines are read by the real boot-script scan from an executable rc.local on a fixture root; the
// expected verdicts are worked by hand from procps's rule that the last assignment of a key wins.
import { afterEach, describe, expect, it } from 'vitest';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Host } from '../../../src/host.js';
import { scanBootScripts, type BootScriptHit } from '../../../src/boot-scripts/scan.js';
import { sysctlConcern, type SysctlLike } from '../../../src/resources/sysctl-file/boot-scripts.js';
import { buildTree } from '../../helpers/tree.js';

const roots: string[] = [];
afterEach(() => {
  for (const r of roots.splice(0)) rmSync(r, { recursive: true, force: true });
});
async function hits(rcLocal: string, files: Record<string, string> = {}): Promise<BootScriptHit[]> {
  const root = mkdtempSync(path.join(tmpdir(), 'sysctl-concern-'));
  roots.push(root);
  buildTree(root, { 'etc/rc.local': rcLocal, ...files });
  chmodSync(path.join(root, 'etc/rc.local'), 0o755);
  return (await scanBootScripts(new Host({ root, live: false }))).hits;
}
const spec: SysctlLike = {
  type: 'SysctlFile',
  settings: { 'net.ipv4.ip_forward': 1, 'net.bridge.bridge-nf-call-iptables': 1 },
  file: '/etc/sysctl.d/99-kubernetes.conf',
};
const judge = (h: BootScriptHit, planned?: Map<string, string>) => sysctlConcern.judge(spec, h, planned);

describe('sysctlConcern: sysctl -w', () => {
  it('a write of a wanted key to another value undoes it; the wanted value, or another key, does not', async () => {
    const h = await hits('#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nsysctl -w net.ipv4.ip_forward=1\nsysctl -w vm.swappiness=10\nexit 0\n');
    expect(h.map((x) => [x.line, judge(x)])).toEqual([
      [2, 'sets net.ipv4.ip_forward = 0, undoing net.ipv4.ip_forward = 1'],
      [3, null],
      [4, null],
    ]);
  });

  it('a write of a coupled key names the coupling; a slash-separated key is the same key', async () => {
    const h = await hits('#!/bin/sh\nsysctl -w net.ipv4.conf.all.forwarding=0\nsysctl -w net/ipv4/ip_forward=0\n');
    expect(judge(h[0]!)).toBe('sets net.ipv4.conf.all.forwarding = 0 (the kernel couples it with net.ipv4.ip_forward), undoing net.ipv4.ip_forward = 1');
    expect(judge(h[1]!)).toMatch(/^sets net\.ipv4\.ip_forward = 0, undoing net\.ipv4\.ip_forward = 1/);
  });

  it('withdraws at boot only the promises of the keys it undoes', async () => {
    const [bad, good] = await hits('#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nsysctl -w net.ipv4.ip_forward=1\n');
    expect(sysctlConcern.withdraws(spec, bad!)).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' }]);
    expect(sysctlConcern.withdraws(spec, good!)).toEqual([]);
  });
});

describe('sysctlConcern: sysctl -p FILE', () => {
  const FILE = '/etc/custom-sysctl.conf';
  it('the last assignment of a wanted key in the loaded file decides, named by file and line', async () => {
    const [h] = await hits(`#!/bin/sh\nsysctl -p ${FILE}\n`, { 'etc/custom-sysctl.conf': 'net.ipv4.ip_forward = 1\nnet.ipv4.ip_forward = 0\n' });
    expect(h!.action.kind).toBe('sysctl-load');
    expect(judge(h!)).toBe(`loads ${FILE} (sysctl -p), whose ${FILE}:2 leaves net.ipv4.ip_forward = 0, undoing net.ipv4.ip_forward = 1`);
    expect(sysctlConcern.withdraws(spec, h!)).toEqual([{ promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' }]);
    const [fine] = await hits(`#!/bin/sh\nsysctl -p ${FILE}\n`, { 'etc/custom-sysctl.conf': 'net.ipv4.ip_forward = 0\nnet.ipv4.ip_forward = 1\n' });
    expect(judge(fine!)).toBeNull();
    expect(sysctlConcern.withdraws(spec, fine!)).toEqual([]);
  });

  it('is judged on the file as the plan leaves it', async () => {
    const [h] = await hits(`#!/bin/sh\nsysctl -p ${FILE}\n`, { 'etc/custom-sysctl.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(judge(h!, new Map([[FILE, '# net.ipv4.ip_forward = 0\n']]))).toBeNull();
    expect(judge(h!, new Map([['/etc/other.conf', '']]))).not.toBeNull();
  });

  it('conflict_policy resolve comments out the offending lines of a file under /etc with the sysctl.d marker', async () => {
    const text = 'vm.swappiness = 10\nnet.ipv4.ip_forward = 0\n';
    const [h] = await hits(`#!/bin/sh\nsysctl -p ${FILE}\n`, { 'etc/custom-sysctl.conf': text });
    const resolving = { ...spec, conflict_policy: 'resolve' };
    const r = sysctlConcern.resolve!(resolving, h!, new Map());
    expect(r).toHaveLength(1);
    expect(r![0]!.file).toBe(FILE);
    expect(r![0]!.before).toBe(text);
    expect(r![0]!.lines).toEqual([2]);
    const after = r![0]!.after.split('\n');
    expect(after[0]).toBe('vm.swappiness = 10');
    expect(r![0]!.after).toContain('# disabled by k8s-host-reconcile: conflicts with /etc/sysctl.d/99-kubernetes.conf');
    expect(after.filter((l) => /^\s*net\.ipv4\.ip_forward/.test(l))).toEqual([]);
    // Without the policy, or when another change of the plan rewrites the file, a person decides.
    expect(sysctlConcern.resolve!(spec, h!, new Map())).toBeNull();
    expect(sysctlConcern.resolve!(resolving, h!, new Map([[FILE, text]]))).toBeNull();
  });

  it('resolve never edits a file outside /etc', async () => {
    const [h] = await hits('#!/bin/sh\nsysctl -p /usr/local/lib/k.conf\n', { 'usr/local/lib/k.conf': 'net.ipv4.ip_forward = 0\n' });
    expect(judge(h!)).not.toBeNull();
    expect(sysctlConcern.resolve!({ ...spec, conflict_policy: 'resolve' }, h!, new Map())).toBeNull();
  });
});

describe('sysctlConcern: module removal and other lines', () => {
  it('removing br_netfilter takes the net.bridge keys away; removing another module does not', async () => {
    const h = await hits('#!/bin/sh\nrmmod br_netfilter\nrmmod overlay\n');
    expect(judge(h[0]!)).toMatch(
      /^removes br_netfilter \(.+\), and with it net\.bridge\.bridge-nf-call-iptables: the kernel has those keys only while the module is loaded$/,
    );
    expect(sysctlConcern.withdraws(spec, h[0]!)).toEqual([{ promise: 'sysctl:net.bridge.bridge-nf-call-iptables', from: 'boot' }]);
    expect(judge(h[1]!)).toBeNull();
    expect(sysctlConcern.withdraws(spec, h[1]!)).toEqual([]);
  });

  it('a swapon is none of its concern; asked without a line it withdraws every wanted key', async () => {
    const [h] = await hits('#!/bin/sh\nswapon /swapfile\n');
    expect(judge(h!)).toBeNull();
    expect(sysctlConcern.withdraws(spec, null)).toEqual([
      { promise: 'sysctl:net.ipv4.ip_forward', from: 'boot' },
      { promise: 'sysctl:net.bridge.bridge-nf-call-iptables', from: 'boot' },
    ]);
  });

  it('an unknown line concerns it when it may write a wanted key: a program, a sysctl write of unknown or matching path', () => {
    const u = (what: 'program' | 'swapon' | 'sysctl' | 'module', p?: string) => ({
      source: 'rc.local' as never,
      file: '/etc/rc.local',
      line: 2,
      what,
      message: 'm',
      ...(p === undefined ? {} : { path: p }),
    });
    expect(sysctlConcern.relevant(u('program'), spec)).toBe(true);
    expect(sysctlConcern.relevant(u('swapon'), spec)).toBe(false);
    expect(sysctlConcern.relevant(u('module'), spec)).toBe(false);
    expect(sysctlConcern.relevant(u('sysctl'), spec)).toBe(true);
    expect(sysctlConcern.relevant(u('sysctl', '/proc/sys/net/ipv4/*'), undefined)).toBe(true);
    // /proc/sys/net/ipv4/ip_forward, or the coupled /proc/sys/net/ipv4/conf/all/forwarding.
    expect(sysctlConcern.relevant(u('sysctl', '/proc/sys/net/ipv4/*'), spec)).toBe(true);
    expect(sysctlConcern.relevant(u('sysctl', '/proc/sys/net/ipv4/conf/*/forwarding'), spec)).toBe(true);
    expect(sysctlConcern.relevant(u('sysctl', '/proc/sys/vm/*'), spec)).toBe(false);
    expect(sysctlConcern.relevant(u('sysctl', '/proc/sys/net/ipv6/conf/*/forwarding'), spec)).toBe(false);
  });

  it('the marker a neutralised line gets says why', () => {
    expect(sysctlConcern.marker(spec)).toContain('this line would undo sysctl values Kubernetes needs');
  });
});
