import { cp, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../src/host.js';
import type { CommandRunner } from '../src/host.js';
import type { DesiredState } from '../src/desired-state.js';
import { kubesprayReport } from '../src/kubespray/report.js';
import type { KubesprayReport } from '../src/kubespray/report.js';

const FIXTURE = path.resolve('test/fixtures/kubespray-basic');
const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const INVENTORY = '[kube_control_plane]\nnode1 ansible_connection=local\n\n[kube_node]\nworker1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n';

async function root(opts: { checkout?: boolean; memKb?: number; files?: Record<string, string> } = {}): Promise<string> {
  const r = await mkdtemp(path.join(tmpdir(), 'ks-report-'));
  temps.push(r);
  if (opts.checkout !== false) await cp(FIXTURE, path.join(r, 'opt/ks/kubespray'), { recursive: true });
  const files: Record<string, string> = {
    'root/ks/inventory/lab/inventory.ini': INVENTORY,
    'proc/meminfo': `MemTotal:        ${opts.memKb ?? 4 * 1024 * 1024} kB\n`,
    'proc/cpuinfo': 'processor\t: 0\nvendor_id\t: X\nmodel name\t: Y\n',
    'etc/os-release': 'ID=debian\nVERSION_ID="12"\nPRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\n',
    ...opts.files,
  };
  for (const [p, c] of Object.entries(files)) {
    await mkdir(path.join(r, path.dirname(p)), { recursive: true });
    await writeFile(path.join(r, p), c);
  }
  return r;
}

const runner: CommandRunner = async (cmd, args) => {
  const key = [cmd, ...args].join(' ');
  const out: Record<string, string> = {
    'uname -m': 'x86_64\n',
    'uname -r': '6.1.0-31-cloud-amd64\n',
    'ip -4 route get 8.8.8.8': '8.8.8.8 dev dummy0 src 192.0.2.10 uid 0\n',
  };
  return { command: key, exitCode: key in out ? 0 : 127, stdout: out[key] ?? '', stderr: '' };
};

function desired(over: Partial<DesiredState> = {}): DesiredState {
  return {
    source: 'desired-state.yaml',
    reports_dir: '/root/ks/preflight',
    kubespray: { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' },
    facts: { source: 'native' },
    resources: [
      {
        type: 'SysctlFile',
        file: '/etc/sysctl.d/k8s.conf',
        settings: { 'net.ipv4.ip_forward': 1 },
        conflict_policy: 'resolve',
      },
    ],
    ...over,
  };
}

const messages = (r: KubesprayReport, level: string) => r.findings.filter((f) => f.level === level).map((f) => f.message);

describe('kubesprayReport', () => {
  it('live: facts with minimal_master_memory_mb, who-fixes and passing memory preflight', async () => {
    const r = await kubesprayReport(new Host({ root: await root(), live: true, runner }), desired());
    expect(r.facts).toEqual({
      memtotal_mb: 4096,
      processor_vcpus: 1,
      distribution: 'Debian',
      distribution_version: '12',
      kernel: '6.1.0-31-cloud-amd64',
      default_ipv4: '192.0.2.10',
      minimal_master_memory_mb: 1800,
    });
    expect(r.whoFixes).toEqual({
      swap: 'kubespray',
      br_netfilter: 'kubespray',
      ip_forward: 'kubespray',
      port_10250: 'operator',
      sysctl_file: '/etc/sysctl.d/90-fixture.conf',
    });
    expect(messages(r, 'error')).toEqual([]);
    expect(messages(r, 'info')).toContain('memory preflight "Control plane needs memory" passes: ansible_memtotal_mb 4096 >= minimal_master_memory_mb 1800 (node1 in kube_control_plane)');
    const port = r.findings.find((f) => f.message.startsWith('port_10250'))!;
    expect(port.level).toBe('warning');
  });

  it('says in kubespray\'s terms when a control plane node has too little memory', async () => {
    const r = await kubesprayReport(new Host({ root: await root({ memKb: 1500 * 1024 }), live: true, runner }), desired());
    const err = r.findings.find((f) => f.level === 'error')!;
    expect(err.message).toBe(
      'kubespray will stop at "Control plane needs memory": node1 is in kube_control_plane and ansible_memtotal_mb 1500 < minimal_master_memory_mb 1800; add memory or move the node out of kube_control_plane before running kubespray',
    );
    expect(err.evidence).toEqual([
      'roles/kubernetes/preinstall/tasks/checks.yml:2 "Control plane needs memory" asserts ansible_memtotal_mb >= minimal_master_memory_mb (when: not ignore_assert_errors and (\'kube_control_plane\' in group_names))',
    ]);
  });

  it('a worker with the same memory passes: only kube_node\'s minimum applies', async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ memKb: 1500 * 1024 }), live: true, runner }),
      desired({ kubespray: { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'worker1' } }),
    );
    expect(messages(r, 'error')).toEqual([]);
    expect(messages(r, 'info')).toContain('memory preflight "Workers need memory" passes: ansible_memtotal_mb 1500 >= minimal_node_memory_mb 900 (worker1 in kube_node)');
  });

  it('offline: skips facts with a finding, still audits the checkout and the sysctl order', async () => {
    const r = await kubesprayReport(
      new Host({
        root: await root({
          files: {
            'etc/sysctl.d/10-early.conf': 'net.ipv4.ip_forward = 0\n',
            'etc/sysctl.d/zz-hardening.conf': '# left by a security audit\nnet.ipv4.ip_forward = 0\nkernel.panic = 10\n',
            'usr/lib/sysctl.d/zz-hardening.conf': 'net.ipv4.ip_forward = 1\n',
          },
        }),
      }),
      desired(),
    );
    expect(r.facts).toBeUndefined();
    expect(messages(r, 'info')[0]).toMatch(/^facts not gathered: offline/);
    expect(r.whoFixes?.sysctl_file).toBe('/etc/sysctl.d/90-fixture.conf');
    const warn = r.findings.filter((f) => f.message.includes('sorts after'));
    expect(warn).toEqual([
      {
        level: 'info',
        message: "/etc/sysctl.d/k8s.conf sorts after kubespray's 90-fixture.conf but sets the same values kubespray sets",
        evidence: [expect.stringContaining('/etc/sysctl.d/k8s.conf (desired SysctlFile) sets net.ipv4.ip_forward = 1')],
      },
      {
        level: 'warning',
        message: "/etc/sysctl.d/zz-hardening.conf sorts after kubespray's 90-fixture.conf and sets a key kubespray sets to another value: at boot it wins and kubespray's value is lost",
        evidence: [
          '/etc/sysctl.d/zz-hardening.conf:2 sets net.ipv4.ip_forward = 0; kubespray sets 1 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:8 "Turn on forwarding"',
        ],
      },
      {
        level: 'info',
        message: "/etc/sysctl.d/zz-hardening.conf sorts after kubespray's 90-fixture.conf but sets the same values kubespray sets",
        evidence: [expect.stringContaining('kernel.panic = 10')],
      },
    ]);
  });

  it('a missing checkout is not a crash: facts stay, minimal_master_memory_mb and who-fixes go, a finding says why', async () => {
    const r = await kubesprayReport(new Host({ root: await root({ checkout: false }), live: true, runner }), desired());
    expect(r.facts?.memtotal_mb).toBe(4096);
    expect(r.facts).not.toHaveProperty('minimal_master_memory_mb');
    expect(r.whoFixes).toBeUndefined();
    expect(messages(r, 'warning')).toEqual([
      'kubespray checkout /opt/ks/kubespray is missing or incomplete (no roles/kubernetes/preinstall/defaults/main.yml): minimal_master_memory_mb and who-fixes.json left out',
    ]);
  });

  it('an unreadable checkout (broken YAML) is not a crash either', async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ files: { 'opt/ks/kubespray/roles/kubernetes/preinstall/defaults/main.yml': 'a: [1,\n' } }), live: true, runner }),
      desired(),
    );
    expect(r.facts?.memtotal_mb).toBe(4096);
    expect(r.facts).not.toHaveProperty('minimal_master_memory_mb');
    expect(r.whoFixes).toBeUndefined();
    expect(messages(r, 'warning')[0]).toMatch(/^kubespray checkout \/opt\/ks\/kubespray cannot be read \(.*main\.yml: .*\): minimal_master_memory_mb and who-fixes.json left out$/);
  });

  it('facts.source ansible without a kubespray section is an error finding, not a throw', async () => {
    const r = await kubesprayReport(new Host({ root: await root(), live: true, runner }), desired({ kubespray: undefined, facts: { source: 'ansible' } }));
    expect(messages(r, 'error')).toEqual(['facts.source is ansible but desired-state has no kubespray section (dir, inventory, node)']);
  });
});
