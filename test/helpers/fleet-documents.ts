// A small fleet of offline host trees, each with one thing in it whose
// verdict follows from what the thing is (not from the tool's output), and
// the --json documents the real CLI prints for them, laid out as the Ansible
// role fetches them: DIR/<host>/reconcile.json.
import { chmodSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { main } from '../../src/cli.js';
import { captureIo } from './io.js';
import { FSTAB } from './swap-modules-tree.js';

export const FLEET_DESIRED = `reports_dir: /root/ks/preflight
resources:
  - type: SwapOff
  - type: ModulesLoad
    modules: [overlay, br_netfilter]
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
first_boot: off
`;

export type Expected = 'failed' | 'operator' | 'unknown' | 'changes' | 'ready';

export interface FleetHost {
  name: string;
  mode: 'plan' | 'apply';
  /** Files planted in the tree besides the fstab with a swap file. */
  files: Record<string, { content: string; mode?: number }>;
  /** An invalid desired state: the CLI refuses before looking at the host. */
  invalidDesired?: boolean;
  /**
   * The verdict the host's content implies: a swap line in fstab is the
   * tool's to fix (plan: changes; apply: ready, as it converges);
   * `sysctl -w` in rc.local is a line a person must remove (operator: the
   * tool never edits an admin's script unless told to); a Python program run
   * at boot may write anything (unknown: the tool reads shell only); an
   * invalid desired state fails the run.
   */
  expect: Expected;
  /** Text the host's operator line or unknown must name (a file:line). */
  names?: string;
}

const RC_SYSCTL = { '/etc/rc.local': { content: '#!/bin/sh\nsysctl -w net.ipv4.ip_forward=0\nexit 0\n', mode: 0o755 } };
const RC_PYTHON = {
  '/etc/rc.local': { content: '#!/bin/sh\n/usr/local/bin/tune.py\nexit 0\n', mode: 0o755 },
  '/usr/local/bin/tune.py': { content: '#!/usr/bin/python3\nopen("/proc/sys/net/ipv4/ip_forward", "w").write("0")\n', mode: 0o755 },
};

export const FLEET: FleetHost[] = [
  { name: 'node-swap-plan', mode: 'plan', files: {}, expect: 'changes' },
  { name: 'node-swap-apply', mode: 'apply', files: {}, expect: 'ready' },
  { name: 'node-rc-sysctl-plan', mode: 'plan', files: RC_SYSCTL, expect: 'operator', names: '/etc/rc.local:2' },
  { name: 'node-rc-sysctl-apply', mode: 'apply', files: RC_SYSCTL, expect: 'operator', names: '/etc/rc.local:2' },
  { name: 'node-python-plan', mode: 'plan', files: RC_PYTHON, expect: 'unknown', names: '/usr/local/bin/tune.py' },
  { name: 'node-python-apply', mode: 'apply', files: RC_PYTHON, expect: 'unknown', names: '/usr/local/bin/tune.py' },
  { name: 'node-bad-desired', mode: 'apply', files: {}, invalidDesired: true, expect: 'failed' },
];

/** The host's offline tree at `root`: an fstab with a swap file, and its files. */
export function plantTree(root: string, h: FleetHost): string {
  mkdirSync(path.join(root, 'etc/systemd/system'), { recursive: true });
  writeFileSync(path.join(root, 'etc/fstab'), FSTAB);
  for (const [p, f] of Object.entries(h.files)) {
    mkdirSync(path.dirname(path.join(root, p)), { recursive: true });
    writeFileSync(path.join(root, p), f.content);
    chmodSync(path.join(root, p), f.mode ?? 0o644);
  }
  return root;
}

/** Builds every host's tree under work/trees and its document under work/fetched/<host>/reconcile.json. */
export async function makeFleetDocuments(work: string, hosts: FleetHost[] = FLEET): Promise<string> {
  const fetched = path.join(work, 'fetched');
  const good = path.join(work, 'desired.yaml');
  const bad = path.join(work, 'bad.yaml');
  writeFileSync(good, FLEET_DESIRED);
  writeFileSync(bad, FLEET_DESIRED.replace('  - type: SwapOff\n', '  - type: SwapOff\n    persist: yes\n'));
  for (const h of hosts) {
    const root = plantTree(path.join(work, 'trees', h.name), h);
    const io = captureIo();
    await main([`--${h.mode}`, '--json', '-f', h.invalidDesired ? bad : good, '--root', root], io.value);
    mkdirSync(path.join(fetched, h.name), { recursive: true });
    writeFileSync(path.join(fetched, h.name, 'reconcile.json'), io.stdout());
  }
  return fetched;
}

/**
 * A real failed apply: the swap host's tree, where someone writes
 * /etc/modules-load.d/k8s.conf while the apply runs (as the CLI reports it,
 * just before ModulesLoad's changes), so the write door refuses a file that
 * changed since the plan. Its document carries `withdrawn_by[].by: "failure"`.
 * Returns the document's text and the CLI's exit code.
 */
export async function failedApplyDocument(work: string): Promise<{ text: string; code: number }> {
  const desired = path.join(work, 'desired-failed.yaml');
  writeFileSync(desired, FLEET_DESIRED);
  const root = plantTree(path.join(work, 'trees', 'node-failed-apply'), { name: 'node-failed-apply', mode: 'apply', files: {}, expect: 'failed' });
  const io = captureIo();
  const write = io.value.stderr.write;
  io.value.stderr.write = (s: string) => {
    if (s.includes('ModulesLoad: applying')) {
      mkdirSync(path.join(root, 'etc/modules-load.d'), { recursive: true });
      writeFileSync(path.join(root, 'etc/modules-load.d/k8s.conf'), 'overlay\n');
    }
    return write(s);
  };
  const code = await main(['--apply', '--json', '-f', desired, '--root', root], io.value);
  return { text: io.stdout(), code };
}
