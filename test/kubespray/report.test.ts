import type { SysctlFileSpec } from '../../src/resources/sysctl-file/spec.js';
import { desiredFiles } from '../../src/reconcile/host-reports.js';
import { chmod, cp, mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host } from '../../src/host.js';
import type { CommandRunner } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import { kubesprayReport } from '../../src/kubespray/report.js';
import type { KubesprayReport } from '../../src/kubespray/report.js';
import { planExitCode } from '../../src/reconcile/run.js';
import type { Plan } from '../../src/reconcile/plan.js';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan } from '../../src/reconcile/plan-text.js';

const FIXTURE = path.resolve('test/fixtures/kubespray-basic');
const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const INVENTORY = '[kube_control_plane]\nnode1 ansible_connection=local\n\n[kube_node]\nworker1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n';

async function root(opts: { checkout?: boolean; memKb?: number; files?: Record<string, string>; links?: Record<string, string> } = {}): Promise<string> {
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
  for (const [p, target] of Object.entries(opts.links ?? {})) {
    await mkdir(path.join(r, path.dirname(p)), { recursive: true });
    await symlink(target, path.join(r, p));
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
    first_boot: 'apply',
    resources: [
      {
        type: 'SysctlFile',
        file: '/etc/sysctl.d/k8s.conf',
        settings: { 'net.ipv4.ip_forward': 1 },
        conflict_policy: 'resolve',
      } as SysctlFileSpec,
    ],
    ...over,
  };
}

const messages = (r: KubesprayReport, level: string) => r.findings.filter((f) => f.level === level).map((f) => f.message);
/** The sysctl ordering findings (the who-fixes sysctl_file finding left out). */
const ordering = (r: KubesprayReport) =>
  r.findings.filter((f) => / (would be|would keep|stays kubespray's|would not be read)[ :]/.test(f.message) || f.message.includes(' is a symlink to '));
const offline = async (files: Record<string, string>, links: Record<string, string> = {}) =>
  kubesprayReport(new Host({ root: await root({ files, links }) }), desired({ resources: [] }));
/** kubespray's fixture writing to Debian's /etc/sysctl.d/99-sysctl.conf instead of 90-fixture.conf. */
const DEFAULTS_99 = {
  'opt/ks/kubespray/roles/kubespray_defaults/defaults/main/main.yml':
    '---\nk8s_sysctl_dir: /etc/sysctl.d\nk8s_sysctl_file: "{{ k8s_sysctl_dir }}/99-sysctl.conf"\n',
};
const FORWARDING = 'kubespray sets 1 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:8 "Turn on forwarding"';

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
      evidence: [
        'ansible-core unknown (no ansible --version and no pinned requirements.txt): modelled as 2.14',
        'distribution_version by distro 1.6.0 (bundled in ansible-core; the target has no python3-distro)',
      ],
    });
    expect(r.whoFixes).toEqual({
      swap: 'kubespray',
      br_netfilter: 'kubespray',
      ip_forward: 'kubespray',
      port_10250: 'operator',
      sysctl_file: '/etc/sysctl.d/90-fixture.conf',
    });
    expect(messages(r, 'error')).toEqual([]);
    expect(messages(r, 'info')).toContain(
      'memory preflight "Control plane needs memory" passes: ansible_memtotal_mb 4096 >= minimal_master_memory_mb 1800 (node1 in kube_control_plane)',
    );
    const port = r.findings.find((f) => f.message.startsWith('port_10250'))!;
    expect(port.level).toBe('warning');
  });

  it("says in kubespray's terms when a control plane node has too little memory", async () => {
    const r = await kubesprayReport(new Host({ root: await root({ memKb: 1500 * 1024 }), live: true, runner }), desired());
    const err = r.findings.find((f) => f.level === 'error')!;
    expect(err.message).toBe(
      'kubespray will stop at "Control plane needs memory": node1 is in kube_control_plane and ansible_memtotal_mb 1500 < minimal_master_memory_mb 1800; add memory or move the node out of kube_control_plane before running kubespray',
    );
    expect(err.evidence).toEqual([
      'roles/kubernetes/preinstall/tasks/checks.yml:2 "Control plane needs memory" asserts ansible_memtotal_mb >= minimal_master_memory_mb (when: not ignore_assert_errors and (\'kube_control_plane\' in group_names))',
    ]);
  });

  it("a worker with the same memory passes: only kube_node's minimum applies", async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ memKb: 1500 * 1024 }), live: true, runner }),
      desired({ kubespray: { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'worker1' } }),
    );
    expect(messages(r, 'error')).toEqual([]);
    expect(messages(r, 'info')).toContain(
      'memory preflight "Workers need memory" passes: ansible_memtotal_mb 1500 >= minimal_node_memory_mb 900 (worker1 in kube_node)',
    );
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
      // The engine's: what the desired SysctlFile will write counts as written.
      { desiredFiles: desiredFiles(desired()) },
    );
    expect(r.facts).toBeUndefined();
    expect(messages(r, 'info')[0]).toMatch(/^facts not gathered: offline/);
    expect(r.whoFixes?.sysctl_file).toBe('/etc/sysctl.d/90-fixture.conf');
    // Only lines read after kubespray's 90-fixture.conf: 10-early.conf sorts before it, and
    // /usr/lib/sysctl.d/zz-hardening.conf is shadowed by the /etc file of the same name.
    expect(ordering(r)).toEqual([
      {
        level: 'warning',
        message:
          "at next boot and after sysctl --system net.ipv4.ip_forward would be 0, not kubespray's 1: /etc/sysctl.d/zz-hardening.conf:2 sorts after /etc/sysctl.d/90-fixture.conf",
        evidence: [
          '/etc/sysctl.d/zz-hardening.conf:2 sets net.ipv4.ip_forward = 0; kubespray sets 1 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:8 "Turn on forwarding"',
        ],
      },
      {
        level: 'info',
        message:
          "at next boot and after sysctl --system net.ipv4.ip_forward stays kubespray's 1: /etc/sysctl.d/k8s.conf:2 (desired SysctlFile) sorts after /etc/sysctl.d/90-fixture.conf but sets the same value",
        evidence: [
          '/etc/sysctl.d/k8s.conf:2 (desired SysctlFile) sets net.ipv4.ip_forward = 1; kubespray sets 1 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:8 "Turn on forwarding"',
        ],
      },
      {
        level: 'info',
        message:
          "at next boot and after sysctl --system kernel.panic stays kubespray's 10: /etc/sysctl.d/zz-hardening.conf:3 sorts after /etc/sysctl.d/90-fixture.conf but sets the same value",
        evidence: [
          '/etc/sysctl.d/zz-hardening.conf:3 sets kernel.panic = 10; kubespray sets 10 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:15 "Extra keys"',
        ],
      },
    ]);
  });

  it('a missing checkout is not a crash: facts stay, minimal_master_memory_mb and who-fixes go, a finding says why', async () => {
    const r = await kubesprayReport(new Host({ root: await root({ checkout: false }), live: true, runner }), desired());
    expect(r.facts?.memtotal_mb).toBe(4096);
    expect(r.facts).not.toHaveProperty('minimal_master_memory_mb');
    expect(r.whoFixes).toBeUndefined();
    // No directory at all is the first run on the repository's lab paths: an info line naming the keys to edit, no warning.
    expect(messages(r, 'warning')).toEqual([]);
    expect(messages(r, 'info')).toContain(
      "no kubespray checkout at /opt/ks/kubespray: minimal_master_memory_mb, who-fixes.json and who fixes each kubeadm check left out; to judge them, set kubespray.dir, kubespray.inventory and kubespray.node in desired-state.yaml to your kubespray checkout, its inventory file and this host's name in it",
    );
  });

  it('a directory that is not a kubespray checkout is a warning naming the key and the missing file', async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ checkout: false, files: { 'opt/ks/kubespray/README.md': 'not kubespray\n' } }), live: true, runner }),
      desired(),
    );
    expect(r.whoFixes).toBeUndefined();
    expect(messages(r, 'warning')).toEqual([
      'kubespray checkout /opt/ks/kubespray (kubespray.dir in desired-state.yaml) is incomplete (no roles/kubernetes/preinstall/defaults/main.yml): minimal_master_memory_mb, who-fixes.json and who fixes each kubeadm check left out',
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
    expect(messages(r, 'warning')[0]).toMatch(
      /^kubespray checkout \/opt\/ks\/kubespray \(kubespray\.dir in desired-state\.yaml\) cannot be read \(.*main\.yml: .*\): minimal_master_memory_mb, who-fixes\.json and who fixes each kubeadm check left out$/,
    );
  });

  it('facts.source ansible without a kubespray section is an error finding, not a throw', async () => {
    const r = await kubesprayReport(new Host({ root: await root(), live: true, runner }), desired({ kubespray: undefined, facts: { source: 'ansible' } }));
    expect(messages(r, 'error')).toEqual(['facts.source is ansible but desired-state has no kubespray section (dir, inventory, node)']);
  });

  describe("sysctl lines that would beat kubespray's file", () => {
    it('a later /etc file with another value warns; an earlier one does not', async () => {
      const r = await offline({
        'etc/sysctl.d/50-early.conf': 'net.ipv4.ip_forward = 0\n',
        'etc/sysctl.d/security-baseline.conf': '# CIS\nkernel.panic = 0\nnet.ipv4.ip_forward = 0\n',
      });
      expect(ordering(r)).toEqual([
        {
          level: 'warning',
          message:
            "at next boot and after sysctl --system net.ipv4.ip_forward would be 0, not kubespray's 1: /etc/sysctl.d/security-baseline.conf:3 sorts after /etc/sysctl.d/90-fixture.conf",
          evidence: [`/etc/sysctl.d/security-baseline.conf:3 sets net.ipv4.ip_forward = 0; ${FORWARDING}`],
        },
        {
          level: 'warning',
          message:
            "at next boot and after sysctl --system kernel.panic would be 0, not kubespray's 10: /etc/sysctl.d/security-baseline.conf:2 sorts after /etc/sysctl.d/90-fixture.conf",
          evidence: [
            '/etc/sysctl.d/security-baseline.conf:2 sets kernel.panic = 0; kubespray sets 10 at roles/kubernetes/preinstall/tasks/kernel/sysctl.yml:15 "Extra keys"',
          ],
        },
      ]);
    });

    it('a vendor /usr/lib file that sorts later warns; one shadowed by an /etc file of its name does not', async () => {
      const r = await offline({
        'usr/lib/sysctl.d/99-vendor.conf': 'net.ipv4.ip_forward=0\n',
        'usr/lib/sysctl.d/95-shadowed.conf': 'net.ipv4.ip_forward=0\n',
        'etc/sysctl.d/95-shadowed.conf': '# local copy without the line\n',
        'usr/lib/sysctl.d/50-default.conf': 'net.ipv4.ip_forward=0\n',
      });
      expect(ordering(r)).toEqual([
        {
          level: 'warning',
          message:
            "at next boot and after sysctl --system net.ipv4.ip_forward would be 0, not kubespray's 1: /usr/lib/sysctl.d/99-vendor.conf:1 sorts after /etc/sysctl.d/90-fixture.conf",
          evidence: [`/usr/lib/sysctl.d/99-vendor.conf:1 sets net.ipv4.ip_forward = 0; ${FORWARDING}`],
        },
      ]);
    });

    it("a later file with kubespray's own value is info, not a warning", async () => {
      const r = await offline({ 'usr/lib/sysctl.d/99-vendor.conf': 'net.ipv4.ip_forward =  1\n' });
      expect(ordering(r)).toEqual([
        {
          level: 'info',
          message:
            "at next boot and after sysctl --system net.ipv4.ip_forward stays kubespray's 1: /usr/lib/sysctl.d/99-vendor.conf:1 sorts after /etc/sysctl.d/90-fixture.conf but sets the same value",
          evidence: [`/usr/lib/sysctl.d/99-vendor.conf:1 sets net.ipv4.ip_forward = 1; ${FORWARDING}`],
        },
      ]);
    });

    it('a regular /etc/sysctl.conf only beats kubespray under sysctl --system, which applies it last', async () => {
      const r = await offline({ 'etc/sysctl.conf': 'net.ipv4.ip_forward = 0\n' });
      expect(ordering(r)).toEqual([
        {
          level: 'warning',
          message: "after sysctl --system net.ipv4.ip_forward would be 0, not kubespray's 1: /etc/sysctl.conf:1 is applied last by sysctl --system",
          evidence: [`/etc/sysctl.conf:1 sets net.ipv4.ip_forward = 0; ${FORWARDING}`],
        },
      ]);
    });

    it('99-sysctl.conf -> ../sysctl.conf: kubespray writes /etc/sysctl.conf, which ranks as 99-sysctl.conf at boot and runs last under sysctl --system', async () => {
      const r = await offline(
        {
          ...DEFAULTS_99,
          // Debian's file with a value kubespray's task rewrites in place.
          'etc/sysctl.conf': '#net.ipv4.ip_forward=1\nnet.ipv4.ip_forward = 0\n',
          'etc/sysctl.d/50-early.conf': 'net.ipv4.ip_forward = 0\n',
          'etc/sysctl.d/99-tuning.conf': 'net.ipv4.ip_forward = 0\n',
        },
        { 'etc/sysctl.d/99-sysctl.conf': '../sysctl.conf' },
      );
      expect(r.whoFixes?.sysctl_file).toBe('/etc/sysctl.d/99-sysctl.conf');
      expect(ordering(r)).toEqual([
        {
          level: 'warning',
          message: "at next boot net.ipv4.ip_forward would be 0, not kubespray's 1: /etc/sysctl.d/99-tuning.conf:1 sorts after /etc/sysctl.d/99-sysctl.conf",
          evidence: [`/etc/sysctl.d/99-tuning.conf:1 sets net.ipv4.ip_forward = 0; ${FORWARDING}`],
        },
        {
          level: 'info',
          message:
            '/etc/sysctl.d/99-sysctl.conf is a symlink to ../sysctl.conf: kubespray writes /etc/sysctl.conf, which still ranks as 99-sysctl.conf at boot and which sysctl --system also applies last as /etc/sysctl.conf',
        },
      ]);
    });

    it("kubespray's sysctl_file shadowed by an /etc file of its name is not read at all", async () => {
      const r = await offline({
        'opt/ks/kubespray/roles/kubespray_defaults/defaults/main/main.yml': '---\nk8s_sysctl_file: /usr/lib/sysctl.d/90-ks.conf\n',
        'etc/sysctl.d/90-ks.conf': '# emptied by the operator\n',
      });
      expect(ordering(r)).toEqual([
        {
          level: 'warning',
          message:
            "at next boot and after sysctl --system kubespray's sysctl_file would not be read: /usr/lib/sysctl.d/90-ks.conf is shadowed by /etc/sysctl.d/90-ks.conf, which has the same name in a higher-precedence directory",
        },
      ]);
    });
  });
});

describe('facts as the ansible-core that runs kubespray gathers them', () => {
  // Debian's os-release says 12; /etc/debian_version says 12.11. distro < 1.8 takes the first, >= 1.8 the second.
  const debian = { 'etc/debian_version': '12.11\n' };
  const pin = (req: string) => ({ ...debian, 'opt/ks/kubespray/requirements.txt': req });
  const version = async (files: Record<string, string>, run: CommandRunner = runner) =>
    (await kubesprayReport(new Host({ root: await root({ files }), live: true, runner: run }), desired())).facts;

  it('requirements.txt pinning ansible==11 (ansible-core 2.18, bundled distro 1.9.0): 12.11', async () => {
    const f = await version(pin('ansible==11.13.0\ncryptography==50.0.0\n'));
    expect([f?.distribution_version, f?.evidence]).toEqual([
      '12.11',
      [
        'ansible-core 2.18 (from /opt/ks/kubespray/requirements.txt)',
        'distribution_version by distro 1.9.0 (bundled in ansible-core 2.18; the target has no python3-distro)',
      ],
    ]);
  });

  it('requirements.txt pinning ansible-core==2.12.5 (bundled distro 1.6.0): 12', async () => {
    expect((await version(pin('ansible==5.7.1\nansible-core==2.12.5\n')))?.distribution_version).toBe('12');
  });

  it('a local ansible --version wins over requirements.txt', async () => {
    const withAnsible: CommandRunner = async (cmd, args, opts) =>
      cmd === 'ansible' && args[0] === '--version'
        ? { command: 'ansible --version', exitCode: 0, stdout: 'ansible [core 2.14.18]\n  config file = None\n', stderr: '' }
        : runner(cmd, args, opts);
    // A wrapper script is not the console script whose package the installed-files model reads: ansible --version runs.
    const dir = await root({ files: { ...pin('ansible==11.13.0\n'), 'usr/bin/ansible': '#!/bin/sh\nexec /opt/ansible/bin/ansible "$@"\n' } });
    await chmod(path.join(dir, 'usr/bin/ansible'), 0o755);
    const f = (await kubesprayReport(new Host({ root: dir, live: true, runner: withAnsible }), desired())).facts;
    expect([f?.distribution_version, f?.evidence?.[0]]).toEqual(['12', 'ansible-core 2.14.18 (from ansible --version)']);
  });

  it("the target's python3-distro beats any bundled copy", async () => {
    const f = await version({
      ...pin('ansible==5.7.1\nansible-core==2.12.5\n'),
      'usr/lib/python3/dist-packages/distro/__init__.py': '',
      'usr/lib/python3/dist-packages/distro-1.8.0.dist-info/METADATA': '',
    });
    expect([f?.distribution_version, f?.evidence?.[1]]).toEqual([
      '12.11',
      "distribution_version by distro 1.8.0 (the target's system python3-distro, which ansible imports first)",
    ]);
  });
});

describe('a failing preflight is an error', () => {
  // The control plane memory assert in a form no pattern knows: Ansible evaluates
  // not (1500 < 1800), false, and stops the host (test/kubespray/tasks.walk.test.ts
  // checks the same form against ansible-playbook).
  const notLess = (that: string) => ({
    'opt/ks/kubespray/roles/kubernetes/preinstall/tasks/checks.yml': `---\n- name: Control plane needs memory\n  assert:\n    that: ${that}\n  when:\n    - not ignore_assert_errors\n    - ('kube_control_plane' in group_names)\n`,
  });

  it('not (ansible_facts.memtotal_mb < minimal_master_memory_mb) with too little memory: an error that stops, --plan exits 1 and says so, --json carries it', async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ memKb: 1500 * 1024, files: notLess('not (ansible_facts.memtotal_mb < minimal_master_memory_mb)') }), live: true, runner }),
      desired(),
    );
    const stops = r.findings.filter((f) => f.stops);
    expect(stops.map((f) => f.level)).toEqual(['error']);
    expect(stops[0]!.message).toContain('kubespray will stop at "Control plane needs memory"');
    expect(r.findings.some((f) => f.level === 'info' && /passes/.test(f.message) && f.message.includes('Control plane'))).toBe(false);
    expect(planExitCode(0, 0, r.findings)).toBe(1);
    const plan: Plan = { live: true, root: '/', resources: [] };
    const doc = planDocument(plan, { findings: r.findings });
    const text = renderPlan(doc, paletteFor({}));
    expect(text).not.toContain('No changes. The host matches the desired state.');
    expect(text).toMatch(/Error: kubespray's preflight will stop on this host \(1 failing assert, the errors above\)\. Plan: 0 changes pending/);
    const json = JSON.parse(JSON.stringify(doc));
    expect(json.kubespray_preflight_failures).toBe(1);
    expect(json.findings.filter((f: { stops?: boolean }) => f.stops).length).toBe(1);
  });

  it('the same assert with enough memory passes and stops nothing', async () => {
    const r = await kubesprayReport(
      new Host({ root: await root({ memKb: 4096 * 1024, files: notLess('not (ansible_facts.memtotal_mb < minimal_master_memory_mb)') }), live: true, runner }),
      desired(),
    );
    expect(r.findings.filter((f) => f.stops)).toEqual([]);
    expect(
      planExitCode(
        0,
        0,
        r.findings.filter((f) => !f.unknown),
      ),
    ).toBe(0);
  });

  it('an assert on something else than memory that fails stops too, with its msg', async () => {
    const files = {
      'opt/ks/kubespray/roles/kubernetes/preinstall/tasks/checks.yml':
        "---\n- name: Stop if unknown network plugin\n  assert:\n    that: kube_network_plugin in ['calico', 'flannel']\n    msg: \"{{ kube_network_plugin }} is not supported\"\n  vars:\n    kube_network_plugin: weave2\n",
    };
    const r = await kubesprayReport(new Host({ root: await root({ memKb: 4096 * 1024, files }), live: true, runner }), desired());
    const stops = r.findings.filter((f) => f.stops);
    expect(stops.map((f) => f.message)).toEqual([
      "kubespray's preflight will stop at roles/kubernetes/preinstall/tasks/checks.yml:2 \"Stop if unknown network plugin\": kube_network_plugin in ['calico', 'flannel'] is false: weave2 is not supported",
    ]);
    expect(stops[0]!.evidence).toContain('kube_network_plugin = "weave2"');
  });
});
