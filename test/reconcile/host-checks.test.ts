// The desired-state problems only the host reveals (host-checks.ts asks each
// provider's hostChecks before anything is observed): SysctlFile's keys
// against a running kernel's /proc/sys, here a fixture root treated as live,
// so the keys present are the files the test lays out.
import { afterAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseDesiredState } from '../../src/reconcile/load.js';
import { hostInputIssues } from '../../src/reconcile/host-checks.js';
import { Host } from '../../src/host.js';
import { buildTree } from '../helpers/tree.js';

const F = 'd.yaml';
const doc = (settings: string, extra = '') =>
  `reports_dir: /var/lib/r\nresources:\n  - type: ModulesLoad\n    modules: [overlay, br_netfilter]\n  - type: SysctlFile\n${extra}    settings:\n${settings}`;

function parse(text: string) {
  return parseDesiredState(text, F);
}

describe('host checks on a fixture root treated as live', () => {
  const root = mkdtempSync(path.join(tmpdir(), 'host-checks-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));
  buildTree(root, {
    'proc/sys/net/ipv4/ip_forward': '0\n',
    'proc/sys/kernel/shmmax': '1\n',
    'proc/sys/net/ipv4/conf/eth0.100/rp_filter': '1\n',
  });
  const host = new Host({ root, live: true });

  it('bridge keys are accepted before br_netfilter is loaded when a ModulesLoad resource loads it', async () => {
    const d = parse(doc('      net.bridge.bridge-nf-call-iptables: 1\n      net.ipv4.ip_forward: 1\n      net.ipv4.conf.eth0/100.rp_filter: 1\n'));
    expect(await hostInputIssues(host, d)).toEqual([]);
  });

  it('without that module the missing key is an error naming it and the module', async () => {
    const d = parse(
      'reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      net.bridge.bridge-nf-call-iptables: 1\n      kernel.nope: 1\n      net.ipv4: 1\n',
    );
    const issues = await hostInputIssues(host, d);
    expect(issues.map((i) => `${i.line}:${i.column} ${i.path}: ${i.message}`)).toEqual([
      '5:7 resources[0].settings["net.bridge.bridge-nf-call-iptables"]: /proc/sys/net/bridge/bridge-nf-call-iptables does not exist in the running kernel; it appears once br_netfilter is loaded: list br_netfilter in a ModulesLoad resource',
      '6:7 resources[0].settings["kernel.nope"]: /proc/sys/kernel/nope does not exist in the running kernel',
      '7:7 resources[0].settings["net.ipv4"]: /proc/sys/net/ipv4 is a directory of keys, not a key',
    ]);
  });

  it('offline the keys are not judged (no running kernel)', async () => {
    const d = parse('reports_dir: /r\nresources:\n  - type: SysctlFile\n    settings:\n      kernel.nope: 1\n');
    expect(await hostInputIssues(new Host({ root }), d)).toEqual([]);
  });
});
