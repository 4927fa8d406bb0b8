// Issue 44: who-fixes.json answers what kubespray's roles do, on every memory
// size. The lab's two fixture trees (test/vm/fixtures/kubespray and
// test/fixtures/kubespray-basic, which the VM suite stages; both written like
// kubespray's roles) at 900, 1024, 1474, 1500 and 4096 MB, as a control-plane
// node and as a node-only host: the same five fields each time, while the
// plan's preflight reports the memory assert that fails, and exits 1, exactly
// where the fixture's assert fails.
//
// The expected values, read by hand from each fixture's roles:
// test/vm/fixtures/kubespray
// - swap: 0010-swapoff.yml comments out fstab swap lines (replace, when
//   disable_swap, which defaults to true) and runs swapoff -a: "kubespray";
// - br_netfilter: the node role runs modprobe and writes
//   /etc/modules-load.d/kubespray-br_netfilter.conf: "kubespray";
// - ip_forward: 0080-system-configurations.yml sets it with the sysctl module: "kubespray";
// - port_10250: no task frees it: "operator";
// - sysctl_file: "{{ sysctl_file_path }}", /etc/sysctl.d/99-sysctl.conf (preinstall/defaults/main.yml);
// - asserts (0040-verify-settings.yml, >=): control-plane nodes 1500, nodes 1024.
// test/fixtures/kubespray-basic
// - swap: swap.yml removes fstab's swap entries (mount state: absent), masks
//   swap.target and runs swapoff -a: "kubespray";
// - br_netfilter: modprobe, and a template of br_netfilter into modules-load.d: "kubespray";
// - ip_forward: kernel/sysctl.yml's sysctl task (in a rescue, decided at run time): "kubespray";
// - port_10250: kubelet.yml only looks (ss -ltn): "operator";
// - sysctl_file: k8s_sysctl_file, "{{ k8s_sysctl_dir }}/90-fixture.conf" = /etc/sysctl.d/90-fixture.conf;
// - asserts (checks.yml, >=): control-plane nodes 1800, nodes 900.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import type { DesiredState } from '../../src/desired-state.js';
import { kubesprayReport } from '../../src/kubespray/report.js';
import { planExitCode } from '../../src/reconcile/run.js';
import { buildTree } from '../helpers/tree.js';

const HERE = path.dirname(new URL(import.meta.url).pathname);
const KS = '/opt/ks/kubespray';
const INV = '/root/ks/inventory/lab/inventory.ini';

interface LabFixture {
  dir: string;
  whoFixes: Record<string, string>;
  /** Names of the memory asserts and their minimums, as the fixture writes them. */
  controlPlane: [string, number];
  node: [string, number];
  /** The file holding the asserts. */
  verify: string;
}
const FIXTURES: LabFixture[] = [
  {
    dir: path.resolve(HERE, '../vm/fixtures/kubespray'),
    whoFixes: { swap: 'kubespray', br_netfilter: 'kubespray', ip_forward: 'kubespray', port_10250: 'operator', sysctl_file: '/etc/sysctl.d/99-sysctl.conf' },
    controlPlane: ['Stop if memory is too small for control plane nodes', 1500],
    node: ['Stop if memory is too small for nodes', 1024],
    verify: 'roles/kubernetes/preinstall/tasks/0040-verify-settings.yml',
  },
  {
    dir: path.resolve(HERE, '../fixtures/kubespray-basic'),
    whoFixes: { swap: 'kubespray', br_netfilter: 'kubespray', ip_forward: 'kubespray', port_10250: 'operator', sysctl_file: '/etc/sysctl.d/90-fixture.conf' },
    controlPlane: ['Control plane needs memory', 1800],
    node: ['Workers need memory', 900],
    verify: 'roles/kubernetes/preinstall/tasks/checks.yml',
  },
];

const INVENTORIES = {
  // The lab's: node1 in every group, so the control-plane assert comes first.
  'control-plane node': '[kube_control_plane]\nnode1\n\n[etcd]\nnode1\n\n[kube_node]\nnode1\n',
  'node-only host': '[kube_control_plane]\ncp1\n\n[etcd]\ncp1\n\n[kube_node]\nnode1\n',
};
type Role = keyof typeof INVENTORIES;
/** Which assert fails first, from the minimums above (Ansible's >=); null where none does. */
function stopsAt(f: LabFixture, role: Role, mb: number): string | null {
  if (role === 'control-plane node' && mb < f.controlPlane[1]) return f.controlPlane[0];
  return mb < f.node[1] ? f.node[0] : null;
}

const runner = cannedRunner({
  'uname -m': 'x86_64\n',
  'uname -r': '6.1.0-31-amd64\n',
  'ip -4 route get 8.8.8.8': '8.8.8.8 dev dummy0 src 192.0.2.10 uid 0\n',
});

const desired: DesiredState = {
  source: 'desired-state.yaml',
  reports_dir: '/root/ks/preflight',
  kubespray: { dir: KS, inventory: INV, node: 'node1' },
  facts: { source: 'native' },
  first_boot: 'apply',
  resources: [],
};

const roots: string[] = [];
afterAll(() => roots.forEach((r) => rmSync(r, { recursive: true, force: true })));

function host(fixture: string, inventory: string, memtotalMb: number): Host {
  const root = mkdtempSync(path.join(tmpdir(), 'ks-memory-'));
  roots.push(root);
  cpSync(fixture, path.join(root, KS.slice(1)), { recursive: true });
  buildTree(root, {
    [INV.slice(1)]: inventory,
    'proc/meminfo': `MemTotal:        ${memtotalMb * 1024} kB\nSwapTotal:             0 kB\n`,
    'proc/cpuinfo': 'processor\t: 0\nprocessor\t: 1\n',
    'etc/os-release': 'ID=debian\nVERSION_ID="12"\n',
  });
  return new Host({ root, live: true, runner });
}

describe('who-fixes.json does not change with memory (issue 44)', () => {
  for (const f of FIXTURES) {
    for (const [role, inventory] of Object.entries(INVENTORIES) as [Role, string][]) {
      for (const mb of [900, 1024, 1474, 1500, 4096]) {
        const stops = stopsAt(f, role, mb);
        it(`${path.basename(f.dir)}, ${role}, ${mb} MB: the five fields; the plan ${stops ? `stops at "${stops}" and exits 1` : 'reports no preflight stop'}`, async () => {
          const r = await kubesprayReport(host(f.dir, inventory, mb), desired);
          expect(r.facts?.memtotal_mb).toBe(mb);
          expect(r.whoFixes).toEqual(f.whoFixes);
          const errors = r.findings.filter((x) => x.level === 'error');
          expect(errors.map((x) => x.message.split('": ')[0])).toEqual(stops ? [`kubespray will stop at "${stops}`] : []);
          expect(planExitCode(0, 0, r.findings)).toBe(stops ? 1 : 0);
          // The memory stop is reported once, as itself: no verdict turns into an operator line for it.
          expect(r.findings.filter((x) => x.message.includes(': the operator must fix it')).map((x) => x.message.split(':')[0])).toEqual(['port_10250']);
          // Each fix after the failing assert says so in its evidence; none does where nothing fails.
          const ipf = r.findings.find((x) => x.message === 'ip_forward: kubespray fixes it')!;
          expect(ipf.evidence!.some((e) => e.includes(`after the preflight passes (it fails today: the assert at ${f.verify}:`))).toBe(stops !== null);
        });
      }
    }
  }
});
