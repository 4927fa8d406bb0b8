// kubeadm's preflight in the plan: live fixture hosts (their /proc and /sys
// plain files under the root, no command answered) with the kubespray-shaped
// fixture checkout, through hostReports as the engine calls it; and one
// offline --plan through the CLI, text and --json. Who fixes what is worked
// out here by hand from the fixture's files: test/fixtures/kubespray-basic's
// roles/system_packages/vars/main.yml installs iptables on Debian and has no
// ethtool; its minimal_master_memory_mb is 1800.
import { chmodSync, mkdirSync, readFileSync } from 'node:fs';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { Host, type CommandRunner } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import type { Finding } from '../../src/findings.js';
import { hostReports } from '../../src/reconcile/host-reports.js';
import { planExitCode } from '../../src/reconcile/run.js';
import { makePlan } from '../../src/reconcile/plan.js';
import { planDocument } from '../../src/reconcile/plan-document.js';
import { paletteFor, renderPlan } from '../../src/reconcile/plan-text.js';
import { buildTree, type Tree } from '../helpers/tree.js';
import { cannedRunner } from '../helpers/canned-runner.js';
import { runCli } from '../helpers/run-cli.js';
import { CONFIG_V2, CONTAINERD, RUNC } from '../helpers/debian-runtimes.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

const PROGRAMS = ['conntrack', 'ip', 'iptables', 'mount', 'nsenter', 'ebtables', 'ethtool', 'socat', 'tc', 'touch'];
const INVENTORY = '/root/ks/inventory/lab/inventory.ini';

const cpuinfo = (n: number) =>
  Array.from({ length: n }, (_, i) => `processor\t: ${i}\nphysical id\t: 0\nsiblings\t: ${n}\ncore id\t\t: ${i}\ncpu cores\t: ${n}\n`).join('\n');

/**
 * Debian 12's systemd-timesyncd as a server install has it (Priority: standard): its unit, enabled from
 * sysinit.target (its WantedBy=), and the targets from default.target down to sysinit.target.
 */
const TIMESYNCD: Tree = {
  'lib/systemd/system/systemd-timesyncd.service':
    '[Unit]\nDescription=Network Time Synchronization\nConditionVirtualization=!container\n\n[Service]\nType=notify\nExecStart=/lib/systemd/systemd-timesyncd\n\n[Install]\nWantedBy=sysinit.target\nAlias=dbus-org.freedesktop.timesync1.service\n',
  'etc/systemd/system/sysinit.target.wants/systemd-timesyncd.service': { link: '/lib/systemd/system/systemd-timesyncd.service' },
  'etc/systemd/system/dbus-org.freedesktop.timesync1.service': { link: '/lib/systemd/system/systemd-timesyncd.service' },
  'lib/systemd/system/sysinit.target': '[Unit]\nDescription=System Initialization\n',
  'lib/systemd/system/basic.target': '[Unit]\nDescription=Basic System\nRequires=sysinit.target\nAfter=sysinit.target\n',
  'lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User System\nRequires=basic.target\nAfter=basic.target\n',
  'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
};

/** A stock Debian 12 server as its kernel files show it: `cpus`, `memKb`, a full cgroup v2, every program but `missing`, systemd-timesyncd unless `timeClient` is false. */
function server(o: { cpus?: number; memKb?: number; missing?: string[]; controllers?: string; timeClient?: boolean; extra?: Tree } = {}): Tree {
  const tree: Tree = {
    ...(o.timeClient === false ? {} : TIMESYNCD),
    'proc/meminfo': `MemTotal:       ${o.memKb ?? 2030000} kB\nSwapTotal:             0 kB\n`,
    'proc/self/personality': '00000000\n',
    'proc/sys/kernel/osrelease': '6.1.0-31-cloud-amd64\n',
    'proc/sys/kernel/arch': 'x86_64\n',
    'proc/cpuinfo': cpuinfo(o.cpus ?? 2),
    'sys/fs/cgroup/cgroup.controllers': o.controllers ?? 'cpuset cpu io memory hugetlb pids rdma misc\n',
    'etc/os-release': 'NAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION_CODENAME=bookworm\nID=debian\n',
    'etc/debian_version': '12.8\n',
    ...o.extra,
  };
  for (const p of PROGRAMS.filter((p) => !(o.missing ?? []).includes(p))) tree[`usr/sbin/${p}`] = '#!/bin/sh\n';
  return tree;
}

async function root(tree: Tree, checkout: boolean): Promise<string> {
  const r = await mkdtemp(path.join(tmpdir(), 'acceptance-'));
  temps.push(r);
  if (checkout) await cp(path.resolve('test/fixtures/kubespray-basic'), path.join(r, 'opt/ks/kubespray'), { recursive: true });
  buildTree(r, tree);
  mkdirSync(path.join(r, 'usr/sbin'), { recursive: true });
  for (const p of PROGRAMS) if (p in tree || `usr/sbin/${p}` in tree) chmodSync(path.join(r, 'usr/sbin', p), 0o755);
  return r;
}

const desired = (kubespray: boolean): DesiredState => ({
  source: 'desired-state.yaml',
  reports_dir: '/root/ks/preflight',
  kubespray: kubespray ? { dir: '/opt/ks/kubespray', inventory: INVENTORY, node: 'node1' } : (null as never),
  facts: { source: 'native' },
  first_boot: 'off',
  resources: [],
});

/** The inventory: node1 a control-plane node (or a worker), with `vars` on [all:vars]. */
const inventory = (o: { worker?: boolean; vars?: string[] } = {}): Tree => ({
  [INVENTORY.slice(1)]: [
    `[${o.worker ? 'kube_node' : 'kube_control_plane'}]`,
    'node1',
    '',
    '[k8s_cluster:children]',
    o.worker ? 'kube_node' : 'kube_control_plane',
    '',
    '[all:vars]',
    ...(o.vars ?? []),
    '',
  ].join('\n'),
});
/** kubespray's kubeadm roles in their shape: kubeadm_ignore_preflight_errors defaults to [] in kubeadm_common, which both depend on. */
const KUBEADM_ROLES: Tree = {
  'opt/ks/kubespray/roles/kubernetes/kubeadm_common/defaults/main.yml': '---\nkubeadm_ignore_preflight_errors: []\n',
  'opt/ks/kubespray/roles/kubernetes/control-plane/meta/main.yml': '---\ndependencies:\n  - role: kubernetes/kubeadm_common\n',
  'opt/ks/kubespray/roles/kubernetes/kubeadm/meta/main.yml': '---\ndependencies:\n  - role: kubernetes/kubeadm_common\n',
};

async function acceptance(tree: Tree, kubespray = true): Promise<Finding[]> {
  const host = new Host({ root: await root(tree, kubespray), live: true, runner: cannedRunner({}) });
  const { findings } = await hostReports(host, desired(kubespray), () => {}, null);
  return findings.filter((f) => f.check !== undefined && f.check !== 'FormerNode');
}
const brief = (fs: Finding[]) => fs.map((f) => [f.check, f.level, f.stops ?? false, f.unknown ?? false]);

describe('a host that passes every check gets no line', () => {
  it('a stock Debian 12 control-plane node with 2 CPUs and 1982 MB: no acceptance finding, and the plan not made worse', async () => {
    const fs = await acceptance({ ...server(), ...inventory({ vars: ['kube_version=v1.31.4'] }), ...KUBEADM_ROLES });
    expect(fs).toEqual([]);
  });
});

describe("no false alarm on the suites' stock hosts", () => {
  // The VM suite's guest (test/vm/lib/vm.mjs: -smp 2, -m 2048, its inventory, the kubespray-basic fixture at /opt/ks/kubespray)
  // on a base without conntrack, iptables, ebtables, ethtool and socat (mmdebstrap --variant=apt, as the farm's rootfs lacks them).
  const VM_INVENTORY: Tree = {
    [INVENTORY.slice(1)]:
      '[all]\nnode1 ansible_connection=local\n\n[kube_control_plane]\nnode1\n\n[etcd]\nnode1\n\n[kube_node]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n',
  };
  const BASE_MISSING = ['conntrack', 'iptables', 'ebtables', 'ethtool', 'socat'];

  it("the VM guest: kubespray installs iptables, ebtables and socat (info), ethtool is kubeadm's warning, no time client a warning; nothing stops or is unknown", async () => {
    // Its base (test/vm/lib/base.mjs, mmdebstrap --variant=apt) has no time client: a true warning for a VM, which the exit code does not count.
    const host = new Host({
      root: await root({ ...server({ memKb: 2014000, missing: BASE_MISSING, timeClient: false }), ...VM_INVENTORY }, true),
      live: true,
      runner: cannedRunner({}),
    });
    const { findings } = await hostReports(host, desired(true), () => {}, null);
    const named = findings.filter((f) => f.check !== undefined);
    expect(brief(named)).toEqual([
      ['FileExisting-iptables', 'info', false, false],
      ['FileExisting-ebtables', 'info', false, false],
      ['FileExisting-ethtool', 'warning', false, false],
      ['FileExisting-socat', 'info', false, false],
      ['TimeSync', 'warning', false, false],
    ]);
    // conntrack: the fixture has no kube_version, so whether kubeadm checks it is said in the one info line.
    expect(findings.find((f) => f.message.startsWith('kubeadm preflight checks not judged here'))!.message).toContain('FileExisting-conntrack');
    // What this slice adds leaves the plan's exit code where the rest puts it (0 here: nothing pending).
    const added = findings.filter((f) => f.check !== undefined || f.message.startsWith('kubeadm preflight checks not judged here'));
    expect(planExitCode(0, 0, added)).toBe(0);
  });

  it('a farm or fleet container (no kubespray section, /run/systemd/container, controllers not delegated): info only, exit code unchanged', async () => {
    // The farm's rootfs has no time client either; a container's clock is the host's, so that is no warning.
    const tree = { ...server({ missing: BASE_MISSING, controllers: '\n', timeClient: false }), 'run/systemd/container': 'systemd-nspawn\n' };
    const host = new Host({ root: await root(tree, false), live: true, runner: cannedRunner({}) });
    const { findings } = await hostReports(host, desired(false), () => {}, null);
    expect(findings.filter((f) => f.check !== undefined || f.unknown || f.stops)).toEqual([]);
    expect(planExitCode(0, 0, findings)).toBe(0);
  });
});

describe('NumCPU', () => {
  it('1 CPU on a control-plane node: kubeadm init stops, kubespray ignores nothing: an error that stops (exit 1)', async () => {
    const fs = await acceptance({ ...server({ cpus: 1 }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['NumCPU', 'error', true, false]]);
    expect(fs[0]!.message).toContain('[ERROR NumCPU]: the number of available CPUs 1 is less than the required 2');
    expect(planExitCode(0, 0, fs)).toBe(1);
  });
  it('in the text plan and the plan document: the line by its name, and the summary says kubeadm fails NumCPU', async () => {
    const host = new Host({ root: await root({ ...server({ cpus: 1 }), ...inventory(), ...KUBEADM_ROLES }, true), live: true, runner: cannedRunner({}) });
    const plan = await makePlan(host, desired(true));
    const { findings } = await hostReports(host, desired(true), () => {}, plan);
    const doc = planDocument(plan, { findings });
    expect(doc.findings.filter((f) => f.check === 'NumCPU').map((f) => [f.level, f.stops])).toEqual([['error', true]]);
    expect(doc.kubespray_preflight_failures).toBe(1);
    const text = renderPlan(doc, paletteFor({ isTTY: false }, {}));
    expect(text).toContain(
      '  error [NumCPU]: kubeadm init (and join --control-plane) preflight: [ERROR NumCPU]: the number of available CPUs 1 is less than the required 2',
    );
    expect(text).toContain("Error: kubespray's preflight will stop on this host (kubeadm's preflight fails NumCPU, the errors above).");
  });
  it('1 CPU with NumCPU in kubeadm_ignore_preflight_errors (kubeadm compares lowercased): kubeadm goes on, a warning', async () => {
    const fs = await acceptance({
      ...server({ cpus: 1 }),
      ...inventory(),
      ...KUBEADM_ROLES,
      // group_vars beside the inventory, as kubespray's sample inventory keeps them.
      'root/ks/inventory/lab/group_vars/all.yml': '---\nkubeadm_ignore_preflight_errors: [NumCPU]\n',
    });
    expect(brief(fs)).toEqual([['NumCPU', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('--ignore-preflight-errors');
  });
  it('1 CPU on a worker: kubeadm join does not check it, no line', async () => {
    expect(await acceptance({ ...server({ cpus: 1 }), ...inventory({ worker: true }), ...KUBEADM_ROLES })).toEqual([]);
  });
  it('1 CPU and a checkout without kubeadm_ignore_preflight_errors: unknown, loudly', async () => {
    const fs = await acceptance({ ...server({ cpus: 1 }), ...inventory() });
    expect(brief(fs)).toEqual([['NumCPU', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('kubeadm_ignore_preflight_errors is not defined');
  });
});

describe("Mem, beside kubespray's own memory assert", () => {
  it("1600 MB (2030000 kB would be 1982): kubespray's assert (1800) stops first; Mem points to it and stops nothing itself", async () => {
    const fs = await acceptance({ ...server({ memKb: 1600 * 1024 }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['Mem', 'info', false, false]]);
    expect(fs[0]!.message).toContain('[ERROR Mem]: the system RAM (1600 MB) is less than the minimum 1700 MB');
    expect(fs[0]!.message).toContain("kubespray's own memory assert stops first");
  });
  it('1600 MB with minimal_master_memory_mb 1500: kubespray lets it through, kubeadm stops: an error that stops', async () => {
    const fs = await acceptance({ ...server({ memKb: 1600 * 1024 }), ...inventory({ vars: ['minimal_master_memory_mb=1500'] }), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['Mem', 'error', true, false]]);
  });
});

describe('FileExisting: who installs a missing program', () => {
  it('iptables missing: kubespray installs it on Debian (system_packages), an info line naming the file and line', async () => {
    const fs = await acceptance({ ...server({ missing: ['iptables'] }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['FileExisting-iptables', 'info', false, false]]);
    expect(fs[0]!.message).toContain('[ERROR FileExisting-iptables]: iptables not found in system path');
    expect(fs[0]!.message).toContain('kubespray installs iptables before kubeadm runs');
    // The fixture's vars file has pkgs: on line 4 and iptables: on line 11.
    expect(fs[0]!.evidence).toContain(
      "roles/system_packages/vars/main.yml:11 pkgs.iptables: {{ ansible_os_family in ['Debian', 'RedHat', 'Suse'] }} (all true here)",
    );
  });
  it('ethtool missing: kubespray does not install it, and kubeadm only warns: a warning for the operator', async () => {
    const fs = await acceptance({ ...server({ missing: ['ethtool'] }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['FileExisting-ethtool', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('[WARNING FileExisting-ethtool]: ethtool not found in system path');
    expect(fs[0]!.message).toContain('has no ethtool');
  });
  it("nsenter missing: util-linux is not in kubespray's list: an error that stops", async () => {
    const fs = await acceptance({ ...server({ missing: ['nsenter'] }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['FileExisting-nsenter', 'error', true, false]]);
  });
  it('a checkout whose system_packages has no pkgs list: who installs it is unknown, loudly', async () => {
    const fs = await acceptance({
      ...server({ missing: ['iptables'] }),
      ...inventory(),
      ...KUBEADM_ROLES,
      'opt/ks/kubespray/roles/system_packages/vars/main.yml': '---\n',
    });
    expect(brief(fs)).toEqual([['FileExisting-iptables', 'warning', false, true]]);
  });
  it('no kubespray section: no finding by name, one info line saying who installs it is not evaluated (as the rest of the audit)', async () => {
    const host = new Host({ root: await root(server({ missing: ['iptables'] }), false), live: true, runner: cannedRunner({}) });
    const { findings } = await hostReports(host, desired(false), () => {}, null);
    expect(findings.filter((f) => f.check !== undefined)).toEqual([]);
    const line = findings.find((f) => f.message.startsWith('kubeadm preflight checks not judged here'))!;
    expect([line.level, line.unknown, line.stops]).toEqual(['info', undefined, undefined]);
    // kubelet.service is absent too (kubespray writes it), and who fixes that is not evaluated either: the same reason, one group.
    expect(line.message).toContain(
      'FileExisting-iptables (missing), Service-Kubelet (kubelet service does not exist): who fixes it is not evaluated: no readable kubespray checkout in desired-state',
    );
    expect(planExitCode(0, 0, findings)).toBe(0);
  });
});

describe('SystemVerification', () => {
  it('cgroup v2 without cpuset: an error that stops; a full set: nothing', async () => {
    const fs = await acceptance({ ...server({ controllers: 'cpu io memory hugetlb pids\n' }), ...inventory(), ...KUBEADM_ROLES });
    expect(brief(fs)).toEqual([['SystemVerification', 'error', true, false]]);
    expect(fs[0]!.message).toContain('[ERROR SystemVerification]: missing required cgroups: cpuset');
  });
  it('in a container (/run/systemd/container) the controllers are not judged: one info line with the reason, no exit code changed', async () => {
    const host = new Host({
      root: await root({ ...server({ controllers: '\n' }), ...inventory(), ...KUBEADM_ROLES, 'run/systemd/container': 'systemd-nspawn\n' }, true),
      live: true,
      runner: cannedRunner({}),
    });
    const { findings } = await hostReports(host, desired(true), () => {}, null);
    const line = findings.find((f) => f.message.startsWith('kubeadm preflight checks not judged here'))!;
    expect(line.level).toBe('info');
    expect(line.message).toContain('SystemVerification');
    expect(line.message).toContain('SystemVerification: this is a container (/run/systemd/container: "systemd-nspawn")');
    expect(findings.filter((f) => f.check === 'SystemVerification')).toEqual([]);
  });
});

describe("in the plan, by kubeadm's name", () => {
  it('--plan --root on an image without iptables: FileExisting-iptables named in the text and in --json; the exit code as without it', async () => {
    const r = await root({ ...server({ missing: ['iptables'] }), 'desired.yaml': 'reports_dir: /root/ks/preflight\nresources: []\n' }, false);
    const text = await runCli(['--plan', '-f', path.join(r, 'desired.yaml'), '--root', r]);
    // Offline, with no checkout: one line, the checks needing the running kernel and the missing program by kubeadm's names.
    const line = text.stdout.split('\n').find((l) => l.startsWith('  info: kubeadm preflight checks not judged here: '))!;
    expect(line).toContain(`NumCPU, Mem, SystemVerification: offline (--root ${r}): it is the running host's`);
    expect(line).toContain('FileExisting-iptables (missing), Service-Kubelet (kubelet service does not exist): who fixes it is not evaluated');
    const json = await runCli(['--plan', '--json', '-f', path.join(r, 'desired.yaml'), '--root', r]);
    const doc = JSON.parse(json.stdout) as { findings: Finding[] };
    expect(doc.findings.filter((f) => f.message.includes('FileExisting-iptables (missing)')).map((f) => f.level)).toEqual(['info']);
    const withIt = await root({ ...server(), 'desired.yaml': 'reports_dir: /root/ks/preflight\nresources: []\n' }, false);
    const clean = await runCli(['--plan', '-f', path.join(withIt, 'desired.yaml'), '--root', withIt]);
    expect(clean.stdout).not.toContain('FileExisting-iptables');
    expect([text.code, json.code]).toEqual([clean.code, clean.code]);
  });
});

/** A runner answering `systemctl show -p ActiveState` for firewalld and `getent -s dns ahosts` as a host with these answers would; anything else fails with 127. */
function answering(o: { firewalld?: string; dns?: Record<string, boolean> }): CommandRunner {
  return async (cmd, args) => {
    const key = [cmd, ...args].join(' ');
    if (key === 'systemctl show -p ActiveState --value firewalld.service' && o.firewalld !== undefined)
      return { command: key, exitCode: 0, stdout: `${o.firewalld}\n`, stderr: '' };
    if (cmd === 'getent' && args.slice(0, 3).join(' ') === '-s dns ahosts' && o.dns) {
      const found = o.dns[args[3]!] ?? false;
      return { command: key, exitCode: found ? 0 : 2, stdout: found ? '10.0.0.9      STREAM node1\n' : '', stderr: '' };
    }
    return { command: key, exitCode: 127, stdout: '', stderr: '' };
  };
}

async function acceptanceWith(tree: Tree, runner: CommandRunner): Promise<Finding[]> {
  const host = new Host({ root: await root(tree, true), live: true, runner });
  const { findings } = await hostReports(host, desired(true), () => {}, null);
  return findings.filter((f) => f.check !== undefined && f.check !== 'FormerNode');
}

// firewalld's own unit, as Debian's firewalld package ships it (the lines kubeadm's check depends on: it exists, it is enabled).
const FIREWALLD_UNIT: Tree = {
  'lib/systemd/system/firewalld.service':
    '[Unit]\nDescription=firewalld - dynamic firewall daemon\nBefore=network-pre.target\n\n[Service]\nType=dbus\nBusName=org.fedoraproject.FirewallD1\nExecStart=/usr/sbin/firewalld --nofork --nopid\n\n[Install]\nWantedBy=multi-user.target\n',
};
const RESOLVES: Tree = { 'etc/hosts': '127.0.0.1\tlocalhost\n10.0.0.9\tnode1\n' };

describe('Firewalld', () => {
  it("active on a control-plane node: kubeadm's warning with the port kubespray gives the API server and 10250; the exit code unchanged", async () => {
    const tree = { ...server({ extra: { ...FIREWALLD_UNIT, ...RESOLVES } }), ...inventory({ vars: ['kube_apiserver_port=8443'] }), ...KUBEADM_ROLES };
    const fs = await acceptanceWith(tree, answering({ firewalld: 'active' }));
    expect(brief(fs)).toEqual([['Firewalld', 'warning', false, false]]);
    expect(fs[0]!.message).toContain(
      '[WARNING Firewalld]: firewalld is active, please ensure ports [8443 10250] are open or your cluster may not function correctly',
    );
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
  it('installed and inactive, or on a worker: no line', async () => {
    const tree = { ...server({ extra: { ...FIREWALLD_UNIT, ...RESOLVES } }), ...inventory(), ...KUBEADM_ROLES };
    expect(await acceptanceWith(tree, answering({ firewalld: 'inactive' }))).toEqual([]);
    const worker = { ...server({ extra: { ...FIREWALLD_UNIT, ...RESOLVES } }), ...inventory({ worker: true }), ...KUBEADM_ROLES };
    expect(await acceptanceWith(worker, answering({ firewalld: 'active' }))).toEqual([]);
  });
  it('offline, an image whose firewalld starts at boot: what kubeadm will say, read from the unit files', async () => {
    const r = await root(
      {
        ...server({ extra: { ...FIREWALLD_UNIT, ...RESOLVES } }),
        ...inventory({ vars: ['kube_apiserver_port=6443'] }),
        ...KUBEADM_ROLES,
        'lib/systemd/system/multi-user.target': '[Unit]\nDescription=Multi-User System\n',
        'etc/systemd/system/default.target': { link: '/lib/systemd/system/multi-user.target' },
        'etc/systemd/system/multi-user.target.wants/firewalld.service': { link: '/lib/systemd/system/firewalld.service' },
      },
      true,
    );
    const host = new Host({ root: r, live: false });
    const { findings } = await hostReports(host, desired(true), () => {}, null);
    // Offline, who fixes what is judged at the booted host's first plan: the check is in the one "not judged" line, with what fails.
    const line = findings.find((f) => f.message.startsWith('kubeadm preflight checks not judged here'))!;
    expect(line.message).toContain('Firewalld (firewalld is active, please ensure ports [6443 10250] are open');
    expect(line.message).toContain('(/lib/systemd/system/firewalld.service starts at boot))');
  });
});

describe('Hostname: the node name kubespray gives kubeadm', () => {
  it('node1 in /etc/hosts: no line', async () => {
    expect(await acceptanceWith({ ...server({ extra: RESOLVES }), ...inventory(), ...KUBEADM_ROLES }, answering({}))).toEqual([]);
  });
  it("not in /etc/hosts and not in DNS: kubeadm's warning, the install goes on", async () => {
    const fs = await acceptanceWith({ ...server(), ...inventory(), ...KUBEADM_ROLES }, answering({ dns: {} }));
    expect(brief(fs)).toEqual([['Hostname', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('[WARNING Hostname]: hostname "node1" could not be reached (not in /etc/hosts, and DNS has no address for it)');
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
  it('in DNS only: no line', async () => {
    expect(await acceptanceWith({ ...server(), ...inventory(), ...KUBEADM_ROLES }, answering({ dns: { node1: true } }))).toEqual([]);
  });
  it('kube_override_hostname from the inventory is the name looked up, and one kubeadm refuses is named', async () => {
    const fs = await acceptanceWith(
      { ...server({ extra: RESOLVES }), ...inventory({ vars: ['kube_override_hostname=-node1'] }), ...KUBEADM_ROLES },
      answering({ dns: {} }),
    );
    expect(brief(fs)).toEqual([['Hostname', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('invalid node name format "-node1"');
    expect(fs[0]!.message).toContain('hostname "-node1" could not be reached');
  });
});

describe('TimeSync: no time client, and whether kubespray installs one (ntp_enabled)', () => {
  const DEFAULTS = 'roles/kubespray_defaults/defaults/main/main.yml';
  const PREINSTALL = 'roles/kubernetes/preinstall/tasks/main.yml';
  const fixture = (f: string) => readFileSync(path.join('test/fixtures/kubespray-basic', f), 'utf8');
  /** The fixture's preinstall tasks with kubespray's own "Configure NTP" task (its tasks/main.yml) appended, and that task's line. */
  const withNtpTask = (): { tree: Tree; line: number } => {
    const text = fixture(PREINSTALL);
    const task = '\n- name: Configure NTP\n  import_tasks: 0081-ntp-configurations.yml\n  when:\n    - not dns_late\n    - ntp_enabled\n';
    return { tree: { [`opt/ks/kubespray/${PREINSTALL}`]: text + task }, line: text.split('\n').length + 1 };
  };
  const noClient = (vars: string[] = [], extra: Tree = {}) => ({
    ...server({ timeClient: false, extra: RESOLVES }),
    ...inventory({ vars }),
    ...KUBEADM_ROLES,
    ...extra,
  });

  it("none, and kubespray's default ntp_enabled false: a warning for the operator naming where it is false; the exit code unchanged", async () => {
    const fs = await acceptance(noClient());
    expect(brief(fs)).toEqual([['TimeSync', 'warning', false, false]]);
    const defaultLine = fixture(DEFAULTS).split('\n').indexOf('ntp_enabled: false') + 1;
    expect(fs[0]!.evidence).toContain(`${DEFAULTS}:${defaultLine} ntp_enabled`);
    expect(fs[0]!.message).toContain('not a kubeadm check, the install goes on');
    expect(fs[0]!.message).toContain('[WARNING TimeSync]: no time synchronisation');
    expect(fs[0]!.message).toContain('set ntp_enabled: true in the inventory');
    expect(fs[0]!.message).not.toContain('kubeadm init and join preflight');
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
  /** ntp_enabled: true in the inventory's group_vars/all (YAML: a boolean). */
  const NTP_ON: Tree = { 'root/ks/inventory/lab/group_vars/all/ntp.yml': '---\nntp_enabled: true\n' };

  it('ntp_enabled true in group_vars and the checkout has the task: kubespray installs one, an info line citing the task', async () => {
    const { tree, line } = withNtpTask();
    const fs = await acceptance(noClient([], { ...NTP_ON, ...tree }));
    expect(brief(fs)).toEqual([['TimeSync', 'info', false, false]]);
    expect(fs[0]!.evidence).toContain(`${PREINSTALL}:${line} 0081-ntp-configurations.yml`);
    expect(fs[0]!.message).toContain('kubespray installs, configures and starts an NTP client');
  });
  it('ntp_enabled true but no such task in the checkout: unknown, loudly (exit 2)', async () => {
    const fs = await acceptance(noClient([], NTP_ON));
    expect(brief(fs)).toEqual([['TimeSync', 'warning', false, true]]);
    expect(fs[0]!.message).toContain(`has no task importing 0081-ntp-configurations.yml`);
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it('ntp_enabled=true on [all:vars] is the string "true" there (as Ansible reads INI group vars): not a boolean, unknown', async () => {
    const fs = await acceptance(noClient(['ntp_enabled=true'], withNtpTask().tree));
    expect(brief(fs)).toEqual([['TimeSync', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('ntp_enabled is "true", not a boolean');
  });
  it('a running client (the stock server) or a container: no line, whatever ntp_enabled says', async () => {
    expect(await acceptance({ ...server({ extra: RESOLVES }), ...inventory(), ...KUBEADM_ROLES })).toEqual([]);
    expect(await acceptance(noClient([], { 'run/systemd/container': 'systemd-nspawn\n' }))).toEqual([]);
  });
});

describe('Service-Kubelet: kubespray writes and enables kubelet.service before kubeadm runs', () => {
  const UNIT_TASKS = 'roles/kubernetes/node/tasks/kubelet-unit.yml';
  const KUBELET = '[Unit]\nDescription=kubelet: The Kubernetes Node Agent\n\n[Service]\nExecStart=/usr/bin/kubelet\n\n[Install]\nWantedBy=multi-user.target\n';
  const isEnabled =
    (state: string): CommandRunner =>
    async (cmd, args) => {
      const key = [cmd, ...args].join(' ');
      if (key === 'systemctl is-enabled kubelet.service') return { command: key, exitCode: state === 'enabled' ? 0 : 1, stdout: `${state}\n`, stderr: '' };
      return { command: key, exitCode: 127, stdout: '', stderr: '' };
    };
  const tree = (extra: Tree = {}) => ({ ...server({ extra: { ...RESOLVES, ...extra } }), ...inventory(), ...KUBEADM_ROLES });

  it('absent (a fresh host), a package unit left disabled, masked in /etc or in /run: no line, kubespray makes it pass', async () => {
    expect(await acceptanceWith(tree(), isEnabled('enabled'))).toEqual([]);
    expect(await acceptanceWith(tree({ 'lib/systemd/system/kubelet.service': KUBELET }), isEnabled('disabled'))).toEqual([]);
    expect(await acceptanceWith(tree({ 'etc/systemd/system/kubelet.service': { link: '/dev/null' } }), isEnabled('masked'))).toEqual([]);
    const runMask = tree({ 'lib/systemd/system/kubelet.service': KUBELET, 'run/systemd/system/kubelet.service': { link: '/dev/null' } });
    expect(await acceptanceWith(runMask, isEnabled('masked'))).toEqual([]);
  });
  it("a checkout without kubespray's enable task: kubeadm's warning, who fixes it unknown, loudly (exit 2)", async () => {
    const only = '---\n- name: Write kubelet systemd init file\n  template:\n    src: kubelet.service.j2\n    dest: /etc/systemd/system/kubelet.service\n';
    const fs = await acceptanceWith(tree({ [`opt/ks/kubespray/${UNIT_TASKS}`]: only }), isEnabled('disabled'));
    expect(brief(fs)).toEqual([['Service-Kubelet', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('[WARNING Service-Kubelet]: kubelet service does not exist');
    expect(fs[0]!.message).toContain('roles/kubernetes/node has no task enabling kubelet');
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it('the tasks there but not run on this node (a false when): a warning for the operator naming the task; the install goes on', async () => {
    const fixture = readFileSync(path.join('test/fixtures/kubespray-basic', UNIT_TASKS), 'utf8');
    const guarded = fixture.replace('  service:\n', '  when: fixture_manage_kubelet | default(false)\n  service:\n');
    const fs = await acceptanceWith(tree({ [`opt/ks/kubespray/${UNIT_TASKS}`]: guarded }), isEnabled('disabled'));
    expect(brief(fs)).toEqual([['Service-Kubelet', 'warning', false, false]]);
    const line = guarded.split('\n').indexOf('- name: Enable kubelet') + 1;
    expect(fs[0]!.message).toContain(`kubespray does not run ${UNIT_TASKS}:${line} Enable kubelet on this node`);
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
});

describe('ResolvConfLoop: /etc/resolv.conf with only loopback nameservers, and the file kubespray hands kubelet', () => {
  // kubespray's own tasks and variables, as v2.24.0 writes them (abridged to what decides the verdict):
  // roles/kubernetes/node/defaults/main.yml:9 kube_resolv_conf; roles/kubernetes/node/tasks/main.yml:2 imports facts.yml, whose
  // "Os specific vars" (facts.yml:53) is include_vars with_first_found; roles/kubernetes/node/vars/ubuntu-22.yml:2;
  // roles/kubespray-defaults/defaults/main/main.yml:100 dns_mode, :118 resolvconf_mode; roles/kubernetes/preinstall/tasks/main.yml:27-63
  // (0060 when neither systemd-resolved nor NetworkManager is active, 0061 when systemd-resolved is, 0063 when NetworkManager is),
  // and 0020-set_facts.yml:95-111, the two `systemctl is-active` registers those conditions read.
  const NODE = 'opt/ks/kubespray/roles/kubernetes/node';
  const PRE = 'opt/ks/kubespray/roles/kubernetes/preinstall/tasks';
  const fixture = (f: string) => readFileSync(path.join('test/fixtures/kubespray-basic', f), 'utf8');
  const NODE_DEFAULTS = '---\n# Kubelet uses this file\nkube_resolv_conf: "/etc/resolv.conf"\n';
  const OS_VARS =
    '---\n- name: Os specific vars\n  include_vars: "{{ item }}"\n  with_first_found:\n  - files:\n' +
    "    - \"{{ ansible_distribution | lower }}-{{ ansible_distribution_version | lower | replace('/', '_') }}.yml\"\n" +
    '    - "{{ ansible_distribution | lower }}-{{ ansible_distribution_release }}.yml"\n' +
    "    - \"{{ ansible_distribution | lower }}-{{ ansible_distribution_major_version | lower | replace('/', '_') }}.yml\"\n" +
    '    - "{{ ansible_distribution | lower }}.yml"\n    - "{{ ansible_os_family | lower }}.yml"\n    skip: true\n';
  const REGISTERS =
    '---\n- name: NetworkManager | Check if host has NetworkManager\n  command: systemctl is-active --quiet NetworkManager.service\n  register: networkmanager_enabled\n  failed_when: false\n  changed_when: false\n  check_mode: false\n\n' +
    '- name: Check systemd-resolved\n  command: systemctl is-active systemd-resolved\n  register: systemd_resolved_enabled\n  failed_when: false\n  changed_when: false\n  check_mode: no\n';
  const IMPORTS =
    "\n- name: Set facts\n  import_tasks: 0020-set_facts.yml\n\n- name: Apply resolvconf settings\n  import_tasks: 0060-resolvconf.yml\n  when:\n    - dns_mode != 'none'\n    - resolvconf_mode == 'host_resolvconf'\n    - systemd_resolved_enabled.rc != 0\n    - networkmanager_enabled.rc != 0\n" +
    "\n- name: Apply systemd-resolved settings\n  import_tasks: 0061-systemd-resolved.yml\n  when:\n    - dns_mode != 'none'\n    - resolvconf_mode == 'host_resolvconf'\n    - systemd_resolved_enabled.rc == 0\n" +
    "\n- name: Apply networkmanager DNS settings\n  import_tasks: 0063-networkmanager-dns.yml\n  when:\n    - dns_mode != 'none'\n    - resolvconf_mode == 'host_resolvconf'\n    - networkmanager_enabled.rc == 0\n";
  // roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2 (v2.24.0, abridged: its ConfigMap and the root zone, whose
  // forward is line 68 there, as written).
  const COREFILE_TEMPLATE =
    '---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: coredns\n  namespace: kube-system\ndata:\n  Corefile: |\n    .:53 {\n        errors {\n        }\n' +
    "        forward . {{ upstream_dns_servers | join(' ') if upstream_dns_servers is defined and upstream_dns_servers | length > 0 else '/etc/resolv.conf' }} {\n" +
    '          prefer_udp\n        }\n        cache 30\n        loop\n    }\n';
  const KUBESPRAY_DNS: Tree = {
    'opt/ks/kubespray/roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2': COREFILE_TEMPLATE,
    [`${NODE}/defaults/main.yml`]: NODE_DEFAULTS,
    [`${NODE}/tasks/main.yml`]: '---\n- name: Fetch facts\n  import_tasks: facts.yml\n' + fixture('roles/kubernetes/node/tasks/main.yml').replace(/^---\n/, ''),
    [`${NODE}/tasks/facts.yml`]: OS_VARS,
    [`${NODE}/vars/ubuntu-22.yml`]: '---\nkube_resolv_conf: "/run/systemd/resolve/resolv.conf"\n',
    'opt/ks/kubespray/roles/kubespray_defaults/defaults/main/dns.yml': '---\ndns_mode: coredns\nresolvconf_mode: host_resolvconf\n',
    [`${PRE}/main.yml`]: fixture('roles/kubernetes/preinstall/tasks/main.yml') + IMPORTS,
    [`${PRE}/0020-set_facts.yml`]: REGISTERS,
    [`${PRE}/0060-resolvconf.yml`]:
      '---\n- name: Add domain/search/nameservers/options to resolv.conf\n  blockinfile:\n    path: "{{ resolvconffile }}"\n    block: "nameserver {{ nameserverentries }}"\n',
    [`${PRE}/0061-systemd-resolved.yml`]:
      '---\n- name: Write Kubespray DNS settings to systemd-resolved\n  template:\n    src: resolved.conf.j2\n    dest: /etc/systemd/resolved.conf.d/kubespray.conf\n',
    [`${PRE}/0063-networkmanager-dns.yml`]:
      '---\n- name: NetworkManager | Add nameservers to NM configuration\n  community.general.ini_file:\n    path: /etc/NetworkManager/conf.d/dns.conf\n    option: servers\n    value: "{{ nameserverentries }}"\n',
  };
  // systemd-resolved's files as it writes them: the stub (127.0.0.53) /etc/resolv.conf links to, and the upstream list.
  const RESOLVED: Tree = {
    'etc/resolv.conf': { link: '../run/systemd/resolve/stub-resolv.conf' },
    'run/systemd/resolve/stub-resolv.conf':
      '# This is /run/systemd/resolve/stub-resolv.conf managed by man:systemd-resolved(8).\nnameserver 127.0.0.53\noptions edns0 trust-ad\nsearch .\n',
    'run/systemd/resolve/resolv.conf': '# This is /run/systemd/resolve/resolv.conf managed by man:systemd-resolved(8).\nnameserver 10.0.0.2\nsearch .\n',
  };
  const UBUNTU: Tree = { 'etc/os-release': 'NAME="Ubuntu"\nVERSION_ID="22.04"\nVERSION_CODENAME=jammy\nID=ubuntu\nID_LIKE=debian\n' };
  const active = (resolved: boolean, nm = false): CommandRunner =>
    cannedRunner({
      'systemctl show -p ActiveState --value systemd-resolved.service': resolved ? 'active\n' : 'inactive\n',
      'systemctl show -p ActiveState --value NetworkManager.service': nm ? 'active\n' : 'inactive\n',
    });
  const tree = (extra: Tree, vars: string[] = []) => ({
    ...server({ extra: { ...RESOLVES, ...extra } }),
    ...inventory({ vars }),
    ...KUBEADM_ROLES,
    ...KUBESPRAY_DNS,
  });
  const line = (text: string, needle: string) => text.split('\n').indexOf(needle) + 1;

  it('a stock Debian 12 cloud image (a DHCP nameserver, no systemd-resolved): no line', async () => {
    expect(await acceptanceWith(tree({ 'etc/resolv.conf': 'domain c.internal\nsearch c.internal.\nnameserver 169.254.169.254\n' }), active(false))).toEqual([]);
  });
  it("Debian 12 with systemd-resolved's stub: kubespray keeps kubelet on /etc/resolv.conf and only writes resolved's drop-in: the operator's warning", async () => {
    const fs = await acceptanceWith(tree(RESOLVED), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, false]]);
    const where = `roles/kubernetes/node/defaults/main.yml:${line(NODE_DEFAULTS, 'kube_resolv_conf: "/etc/resolv.conf"')} kube_resolv_conf`;
    expect(fs[0]!.evidence).toContain(where);
    expect(fs[0]!.message).toContain('not a kubeadm check, the install goes on');
    expect(fs[0]!.message).toContain(
      '[WARNING ResolvConfLoop]: /etc/resolv.conf (a link to /run/systemd/resolve/stub-resolv.conf) has only loopback nameservers (127.0.0.53)',
    );
    expect(fs[0]!.message).toContain(`kubespray hands pods /etc/resolv.conf (${where}) and leaves its nameservers: set kube_resolv_conf`);
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
  it("Ubuntu 22.04: kubespray's vars/ubuntu-22.yml points kubelet at resolved's upstream list: an info line citing it", async () => {
    const fs = await acceptanceWith(tree({ ...RESOLVED, ...UBUNTU }), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'info', false, false]]);
    expect(fs[0]!.evidence).toContain('roles/kubernetes/node/vars/ubuntu-22.yml:2 kube_resolv_conf');
    expect(fs[0]!.message).toContain(
      "kubespray hands pods /run/systemd/resolve/resolv.conf instead (roles/kubernetes/node/vars/ubuntu-22.yml:2 kube_resolv_conf): systemd-resolved's upstream servers 10.0.0.2",
    );
  });
  it('Debian with kube_resolv_conf set to the upstream list in group_vars: kubespray handles it, citing the inventory', async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/dns.yml': '---\nkube_resolv_conf: /run/systemd/resolve/resolv.conf\n' };
    const fs = await acceptanceWith(tree({ ...RESOLVED, ...gv }), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'info', false, false]]);
    expect(fs[0]!.evidence).toContain('/root/ks/inventory/lab/group_vars/all/dns.yml:2 kube_resolv_conf');
  });
  it("... but the upstream list is loopback too (resolved given 127.0.0.1): the operator's warning", async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/dns.yml': '---\nkube_resolv_conf: /run/systemd/resolve/resolv.conf\n' };
    const fs = await acceptanceWith(tree({ ...RESOLVED, 'run/systemd/resolve/resolv.conf': 'nameserver 127.0.0.1\n', ...gv }), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('and it has only loopback nameservers (127.0.0.1): give systemd-resolved real upstream servers');
  });
  it('a local dnsmasq at 127.0.0.1, neither resolved nor NetworkManager active: kubespray rewrites resolv.conf (0060) with run-time servers: unknown, naming the task', async () => {
    const fs = await acceptanceWith(tree({ 'etc/resolv.conf': 'nameserver 127.0.0.1\n' }), active(false));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.evidence).toContain('roles/kubernetes/preinstall/tasks/0060-resolvconf.yml:2 Add domain/search/nameservers/options to resolv.conf');
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it('the same with NetworkManager active: 0063 gives NetworkManager run-time servers: unknown, naming that task', async () => {
    const fs = await acceptanceWith(tree({ 'etc/resolv.conf': 'nameserver 127.0.0.1\n' }), active(false, true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('roles/kubernetes/preinstall/tasks/0063-networkmanager-dns.yml:2 NetworkManager | Add nameservers to NM configuration');
  });
  it("resolvconf_mode none (group_vars): kubespray leaves the host's DNS alone: the operator's warning", async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/dns.yml': '---\nresolvconf_mode: none\n' };
    const fs = await acceptanceWith(tree({ 'etc/resolv.conf': 'nameserver 127.0.0.1\n', ...gv }), active(false));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, false]]);
  });
  const COREFILE = 'roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2 rendered for this node: Corefile line 4';
  it("upstream_dns_servers set: kubespray's Corefile, rendered, forwards there and not to /etc/resolv.conf: an info line citing it", async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/dns.yml': '---\nupstream_dns_servers:\n  - 10.0.0.2\n  - 8.8.8.8\n' };
    const fs = await acceptanceWith(tree({ ...RESOLVED, ...gv }), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'info', false, false]]);
    expect(fs[0]!.evidence).toContain(`${COREFILE}, forward . 10.0.0.2 8.8.8.8`);
    expect(fs[0]!.message).toContain("kubespray's CoreDNS forwards to 10.0.0.2, 8.8.8.8, not to /etc/resolv.conf");
  });
  it("... to a loopback address only: the operator's warning", async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/dns.yml': '---\nupstream_dns_servers: [127.0.0.1]\n' };
    const fs = await acceptanceWith(tree({ ...RESOLVED, ...gv }), active(true));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, false]]);
    expect(fs[0]!.message).toContain("kubespray's CoreDNS forwards to loopback addresses only");
  });
  it('the default: the rendered Corefile forwards to /etc/resolv.conf, cited beside kube_resolv_conf', async () => {
    const fs = await acceptanceWith(tree(RESOLVED), active(true));
    expect(fs[0]!.evidence).toContain(`${COREFILE}, forward . /etc/resolv.conf`);
  });
  it('a checkout without the Corefile template: unknown, naming it', async () => {
    const fs = await acceptanceWith(
      { ...tree(RESOLVED), 'opt/ks/kubespray/roles/kubernetes-apps/ansible/templates/coredns-config.yml.j2': '---\nkind: ConfigMap\n' },
      active(true),
    );
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('coredns-config.yml.j2 renders no data.Corefile');
  });
  it("the services' states not known (systemctl fails): unknown, with the command", async () => {
    const fs = await acceptanceWith(tree({ 'etc/resolv.conf': 'nameserver 127.0.0.1\n' }), cannedRunner({}));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('systemctl show -p ActiveState NetworkManager.service failed (exit 127)');
  });
  it('an /etc/resolv.conf that cannot be read (a directory there): unknown, naming it (exit 2)', async () => {
    const fs = await acceptanceWith(tree({ 'etc/resolv.conf/x': '' }), active(false));
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('not a kubeadm check: ResolvConfLoop cannot be judged: /etc/resolv.conf cannot be read');
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it("a checkout without kubespray's DNS tasks: unknown, naming them", async () => {
    const fs = await acceptanceWith(
      { ...tree({ 'etc/resolv.conf': 'nameserver 127.0.0.1\n' }), [`${PRE}/main.yml`]: fixture('roles/kubernetes/preinstall/tasks/main.yml') },
      active(false),
    );
    expect(brief(fs)).toEqual([['ResolvConfLoop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain(
      "roles/kubernetes/preinstall/tasks has none of kubespray's DNS tasks (0060-resolvconf.yml, 0063-networkmanager-dns.yml, 0100-dhclient-hooks.yml)",
    );
  });
});

describe("ContainerRuntimeCollision: Debian's runtime packages and a cgroupfs config.toml beside kubespray's containerd", () => {
  // kubespray's container-engine roles as v2.24.0 writes them (abridged to what decides the verdict):
  // roles/kubespray-defaults/defaults/main/main.yml:271 deploy_container_engine, :274 container_manager, :374 etcd_deployment_type;
  // roles/container-engine/containerd/meta/main.yml (runc among its dependencies); roles/container-engine/runc/defaults/main.yml:5
  // runc_package_name; runc/tasks/main.yml:2-19 (the stat of /run/ostree-booted, is_ostree, "Runc | Uninstall runc package managed
  // by package manager"); containerd/defaults/main.yml:65 containerd_cfg_dir; containerd/tasks/main.yml:109 "Containerd | Copy
  // containerd config file" (no condition). Debian's own packages and containerd's `config default`: runtime-collision.test.ts.
  const CE = 'opt/ks/kubespray/roles/container-engine';
  const RUNC_TASKS =
    '---\n- name: Runc | check if fedora coreos\n  stat:\n    path: /run/ostree-booted\n    get_attributes: no\n    get_checksum: no\n    get_mime: no\n  register: ostree\n\n' +
    '- name: Runc | set is_ostree\n  set_fact:\n    is_ostree: "{{ ostree.stat.exists }}"\n\n' +
    '- name: Runc | Uninstall runc package managed by package manager\n  package:\n    name: "{{ runc_package_name }}"\n    state: absent\n  when:\n' +
    '    - not (is_ostree or (ansible_distribution == "Flatcar Container Linux by Kinvolk") or (ansible_distribution == "Flatcar"))\n';
  const CONTAINERD_TASKS =
    '---\n- name: Containerd | Copy containerd config file\n  template:\n    src: config.toml.j2\n    dest: "{{ containerd_cfg_dir }}/config.toml"\n    owner: "root"\n    mode: 0640\n';
  const CE_DEFAULTS =
    "---\ndeploy_container_engine: \"{{ inventory_hostname in groups['k8s_cluster'] or etcd_deployment_type == 'docker' }}\"\ncontainer_manager: containerd\netcd_deployment_type: host\n";
  const KUBESPRAY_CE: Tree = {
    'opt/ks/kubespray/roles/kubespray_defaults/defaults/main/ce.yml': CE_DEFAULTS,
    [`${CE}/containerd/meta/main.yml`]: '---\ndependencies:\n  - role: container-engine/runc\n',
    [`${CE}/containerd/defaults/main.yml`]: '---\ncontainerd_cfg_dir: /etc/containerd\n',
    [`${CE}/containerd/tasks/main.yml`]: CONTAINERD_TASKS,
    [`${CE}/runc/defaults/main.yml`]: '---\nrunc_package_name: runc\n',
    [`${CE}/runc/tasks/main.yml`]: RUNC_TASKS,
  };
  const tree = (extra: Tree, vars: string[] = []) => ({
    ...server({ extra: { ...RESOLVES, ...extra } }),
    ...inventory({ vars }),
    ...KUBEADM_ROLES,
    ...KUBESPRAY_CE,
  });
  const line = (text: string, needle: string) => text.split('\n').indexOf(needle) + 1;
  const RUNC_REMOVAL = `roles/container-engine/runc/tasks/main.yml:${line(RUNC_TASKS, '- name: Runc | Uninstall runc package managed by package manager')} Runc | Uninstall runc package managed by package manager`;
  const CONFIG_TASK = `roles/container-engine/containerd/tasks/main.yml:${line(CONTAINERD_TASKS, '- name: Containerd | Copy containerd config file')} Containerd | Copy containerd config file`;

  it('a stock Debian 12 server (a dpkg database without them, no /etc/containerd): no line', async () => {
    expect(
      await acceptance(tree({ 'var/lib/dpkg/status': 'Package: tzdata\nStatus: install ok installed\nArchitecture: all\nVersion: 2024a-0+deb12u1\n' })),
    ).toEqual([]);
  });
  it("Debian's runc and containerd's cgroupfs config: kubespray removes runc and writes config.toml anew: an info line citing both tasks", async () => {
    const fs = await acceptance(tree({ 'var/lib/dpkg/status': RUNC, 'etc/containerd/config.toml': CONFIG_V2 }));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'info', false, false]]);
    expect(fs[0]!.evidence).toEqual(expect.arrayContaining([RUNC_REMOVAL, CONFIG_TASK]));
    expect(fs[0]!.message).toContain("[WARNING ContainerRuntimeCollision]: Debian's runc package is installed (/var/lib/dpkg/status:1: install ok installed)");
    expect(fs[0]!.message).toContain(`kubespray removes Debian's runc (${RUNC_REMOVAL})`);
    expect(fs[0]!.message).toContain(`kubespray writes /etc/containerd/config.toml anew from its template (${CONFIG_TASK})`);
  });
  it("on an ostree host (/run/ostree-booted) kubespray keeps runc: the stat is answered from the tree, the operator's warning", async () => {
    const fs = await acceptance(tree({ 'var/lib/dpkg/status': RUNC, 'run/ostree-booted': '' }));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'warning', false, false]]);
    expect(fs[0]!.message).toContain("no task of kubespray's container-engine roles removes Debian's runc on this node: purge it (apt purge runc)");
  });
  it("Debian's containerd: no task names it, but kubespray removes runc, which it depends on: unknown (apt's dependants are not judged), exit 2", async () => {
    const fs = await acceptance(tree({ 'var/lib/dpkg/status': [RUNC, CONTAINERD].join('\n') }));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'warning', false, true]]);
    expect(fs[0]!.message).toContain(`${RUNC_REMOVAL} removes runc, which containerd depends on (whether apt takes containerd with it is not judged)`);
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it("container_manager crio in group_vars: only kubespray's containerd is evaluated: unknown, naming where it is set", async () => {
    const gv = { 'root/ks/inventory/lab/group_vars/all/ce.yml': '---\ncontainer_manager: crio\n' };
    const fs = await acceptance(tree({ 'var/lib/dpkg/status': RUNC, ...gv }));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('container_manager is "crio" (/root/ks/inventory/lab/group_vars/all/ce.yml:2 container_manager)');
  });
  it("a node outside k8s_cluster (deploy_container_engine false): kubespray installs no engine there: the operator's warning", async () => {
    const fs = await acceptance(tree({ 'etc/containerd/config.toml': CONFIG_V2 }, ['deploy_container_engine=false']));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('kubespray installs no container engine on this node (deploy_container_engine is "false"');
  });
  it('a config.toml the reader does not read: unknown, naming the file and line (exit 2)', async () => {
    const fs = await acceptance(tree({ 'etc/containerd/config.toml': 'imports = """x"""\n' }));
    expect(brief(fs)).toEqual([['ContainerRuntimeCollision', 'warning', false, true]]);
    expect(fs[0]!.message).toBe(
      'not a kubeadm check: ContainerRuntimeCollision cannot be judged: /etc/containerd/config.toml:1: a multi-line string is not read here',
    );
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
});

describe('NetworkManagerCNI: NetworkManager running, and the unmanaged-devices file kubespray writes', () => {
  // kubespray's own tasks as v2.24.0 writes them, hand-read (abridged to what decides the verdict):
  // roles/kubernetes/preinstall/tasks/main.yml:48-53 imports 0062 when networkmanager_enabled.rc == 0; 0020-set_facts.yml:96-102
  // registers it from `systemctl is-active --quiet NetworkManager.service`; 0062-networkmanager-unmanaged-devices.yml:8-17 writes
  // calico.conf when kube_network_plugin == "calico", :21-28 k8s.conf always; roles/kubespray-defaults/defaults/main/main.yml:181
  // kube_network_plugin: calico.
  const PRE = 'opt/ks/kubespray/roles/kubernetes/preinstall/tasks';
  const fixture = (f: string) => readFileSync(path.join('test/fixtures/kubespray-basic', f), 'utf8');
  const TASKS_0062 =
    '---\n- name: NetworkManager | Ensure NetworkManager conf.d dir\n  file:\n    path: "/etc/NetworkManager/conf.d"\n    state: directory\n    recurse: yes\n\n' +
    '- name: NetworkManager | Prevent NetworkManager from managing Calico interfaces (cali*/tunl*/vxlan.calico)\n  copy:\n    content: |\n      [keyfile]\n' +
    '      unmanaged-devices+=interface-name:cali*;interface-name:tunl*;interface-name:vxlan.calico;interface-name:vxlan-v6.calico\n' +
    '    dest: /etc/NetworkManager/conf.d/calico.conf\n    mode: 0644\n  when:\n    - kube_network_plugin == "calico"\n  notify: Preinstall | reload NetworkManager\n\n' +
    '- name: NetworkManager | Prevent NetworkManager from managing K8S interfaces (kube-ipvs0/nodelocaldns)\n  copy:\n    content: |\n      [keyfile]\n' +
    '      unmanaged-devices+=interface-name:kube-ipvs0;interface-name:nodelocaldns\n    dest: /etc/NetworkManager/conf.d/k8s.conf\n    mode: 0644\n  notify: Preinstall | reload NetworkManager\n';
  const KUBESPRAY_NM: Tree = {
    'opt/ks/kubespray/roles/kubespray_defaults/defaults/main/network.yml': '---\nkube_network_plugin: calico\n',
    [`${PRE}/main.yml`]:
      fixture('roles/kubernetes/preinstall/tasks/main.yml') +
      '\n- name: Set facts\n  import_tasks: 0020-set_facts.yml\n\n- name: Apply networkmanager unmanaged devices settings\n  import_tasks: 0062-networkmanager-unmanaged-devices.yml\n  when:\n    - networkmanager_enabled.rc == 0\n',
    [`${PRE}/0020-set_facts.yml`]:
      '---\n- name: NetworkManager | Check if host has NetworkManager\n  command: systemctl is-active --quiet NetworkManager.service\n  register: networkmanager_enabled\n  failed_when: false\n  changed_when: false\n',
    [`${PRE}/0062-networkmanager-unmanaged-devices.yml`]: TASKS_0062,
  };
  // Debian 12's network-manager 1.42 package: its unit (the lines that matter) enabled from multi-user.target, and its
  // /usr/lib/NetworkManager/conf.d/ and NetworkManager.conf as the package ships them (dpkg -c, read by hand).
  const NM_PACKAGE: Tree = {
    'lib/systemd/system/NetworkManager.service':
      '[Unit]\nDescription=Network Manager\nWants=network.target\nBefore=network.target\n\n[Service]\nType=dbus\nBusName=org.freedesktop.NetworkManager\nExecStart=/usr/sbin/NetworkManager --no-daemon\n\n[Install]\nWantedBy=multi-user.target\n',
    'etc/systemd/system/multi-user.target.wants/NetworkManager.service': { link: '/lib/systemd/system/NetworkManager.service' },
    'etc/NetworkManager/NetworkManager.conf': '[main]\nplugins=ifupdown,keyfile\n\n[ifupdown]\nmanaged=false\n',
    // Its udev rule (the line that matters): veth devices not named eth* are unmanaged.
    'lib/udev/rules.d/85-nm-unmanaged.rules':
      'SUBSYSTEM!="net", GOTO="nm_unmanaged_end"\nENV{ID_NET_DRIVER}=="veth", ENV{INTERFACE}!="eth[0-9]*", ENV{NM_UNMANAGED}="1"\nLABEL="nm_unmanaged_end"\n',
  };
  const nmActive = (yes: boolean): CommandRunner =>
    cannedRunner({ 'systemctl show -p ActiveState --value NetworkManager.service': yes ? 'active\n' : 'inactive\n' });
  const tree = (extra: Tree, vars: string[] = []) => ({
    ...server({ extra: { ...RESOLVES, ...extra } }),
    ...inventory({ vars }),
    ...KUBEADM_ROLES,
    ...KUBESPRAY_NM,
  });

  it('a stock Debian 12 server (no network-manager): no line', async () => {
    expect(await acceptanceWith(tree({}), nmActive(false))).toEqual([]);
  });
  it('NetworkManager installed but not started at boot nor active: no line', async () => {
    const { 'etc/systemd/system/multi-user.target.wants/NetworkManager.service': _, ...disabled } = NM_PACKAGE;
    expect(await acceptanceWith(tree(disabled), nmActive(false))).toEqual([]);
  });
  it("NetworkManager active, calico (kubespray's default): kubespray's 0062 writes calico.conf: an info line citing the task", async () => {
    const fs = await acceptanceWith(tree(NM_PACKAGE), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'info', false, false]]);
    expect(fs[0]!.message).toContain('not a kubeadm check, the install goes on');
    // cali* are veths, which NM's udev rule leaves alone: the warning names the tunnels; kubespray's file covers all three.
    expect(fs[0]!.message).toContain("would manage calico's interfaces tunl*, vxlan.calico (");
    expect(fs[0]!.message).toContain('after which NetworkManager leaves cali*, tunl*, vxlan.calico alone');
    expect(fs[0]!.evidence).toContain(
      'roles/kubernetes/preinstall/tasks/0062-networkmanager-unmanaged-devices.yml:8 NetworkManager | Prevent NetworkManager from managing Calico interfaces (cali*/tunl*/vxlan.calico)',
    );
  });
  it("flannel: kubespray writes only k8s.conf (kube-ipvs0, nodelocaldns): the operator's warning with the file to add", async () => {
    const fs = await acceptanceWith(tree(NM_PACKAGE, ['kube_network_plugin=flannel']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, false]]);
    expect(fs[0]!.message).toContain(
      'kubespray writes only /etc/NetworkManager/conf.d/k8s.conf, and NetworkManager would still manage cni0, flannel.1: add /etc/NetworkManager/conf.d/99-kubernetes-cni.conf with "[keyfile]" and "unmanaged-devices+=interface-name:cni0;interface-name:flannel.1"',
    );
    expect(planExitCode(0, 0, fs)).toBe(0);
  });
  it("flannel, with the operator's own conf.d file leaving cni0 and flannel.* alone: no line", async () => {
    const own = { 'etc/NetworkManager/conf.d/90-cni.conf': '[keyfile]\nunmanaged-devices=interface-name:cni0;interface-name:flannel*\n' };
    expect(await acceptanceWith(tree({ ...NM_PACKAGE, ...own }, ['kube_network_plugin=flannel']), nmActive(true))).toEqual([]);
  });
  it("cilium, a later file removing cilium_* (-=): the warning names cilium_vxlan, not the veths NM's udev rule leaves alone", async () => {
    const own = {
      'etc/NetworkManager/conf.d/10-cni.conf': '[keyfile]\nunmanaged-devices+=interface-name:cilium_*;interface-name:lxc*\n',
      'etc/NetworkManager/conf.d/20-undo.conf': '[keyfile]\nunmanaged-devices-=interface-name:cilium_*\n',
    };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...own }, ['kube_network_plugin=cilium']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, false]]);
    expect(fs[0]!.message).toContain("would manage cilium's interfaces cilium_vxlan (");
    expect(fs[0]!.message).toContain('(/etc/NetworkManager/conf.d/10-cni.conf:2, /etc/NetworkManager/conf.d/20-undo.conf:2)');
    expect(fs[0]!.message).toContain('"unmanaged-devices+=interface-name:cilium_vxlan"');
  });
  it("cilium without NM's udev rule (removed): the veths are named too", async () => {
    const { 'lib/udev/rules.d/85-nm-unmanaged.rules': _, ...noRule } = NM_PACKAGE;
    const fs = await acceptanceWith(tree(noRule, ['kube_network_plugin=cilium']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, false]]);
    expect(fs[0]!.message).toContain("would manage cilium's interfaces cilium_host, cilium_net, cilium_vxlan, lxc* (");
  });
  it("calico with the udev rule shadowed in /etc/udev/rules.d: kubespray's calico.conf covers cali* anyway: info", async () => {
    const shadow = { 'etc/udev/rules.d/85-nm-unmanaged.rules': '' };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...shadow }), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'info', false, false]]);
  });
  it('flannel with the udev rule shadowed: flannel creates no veth of its own here, the warning stands', async () => {
    const shadow = { 'etc/udev/rules.d/85-nm-unmanaged.rules': '' };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...shadow }, ['kube_network_plugin=flannel']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, false]]);
  });
  it('cilium with the udev rule shadowed by a file not read here: unknown, naming it', async () => {
    const shadow = { 'etc/udev/rules.d/85-nm-unmanaged.rules': '' };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...shadow }, ['kube_network_plugin=cilium']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, true]]);
    expect(fs[0]!.message).toContain(
      "/etc/udev/rules.d/85-nm-unmanaged.rules shadows NetworkManager's udev rule for veth devices (cilium_host, cilium_net, lxc*)",
    );
  });
  it('a plugin whose interfaces are not known here (kube-ovn): unknown, naming the plugin', async () => {
    const fs = await acceptanceWith(tree(NM_PACKAGE, ['kube_network_plugin=kube-ovn']), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('kube_network_plugin is "kube-ovn"');
    expect(planExitCode(0, 0, fs)).toBe(2);
  });
  it('a conf.d file NetworkManager would refuse: unknown, naming file and line', async () => {
    const bad = { 'etc/NetworkManager/conf.d/50-bad.conf': '[keyfile]\nunmanaged-devices\n' };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...bad }), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('/etc/NetworkManager/conf.d/50-bad.conf:2 is not a key=value line in a group');
  });
  it("an except: spec (Ubuntu's globally-managed-devices shape): unknown, never a guess", async () => {
    const ub = {
      'usr/lib/NetworkManager/conf.d/10-globally-managed-devices.conf': '[keyfile]\nunmanaged-devices=*,except:type:wifi,except:type:gsm,except:type:cdma\n',
    };
    const fs = await acceptanceWith(tree({ ...NM_PACKAGE, ...ub }), nmActive(true));
    expect(brief(fs)).toEqual([['NetworkManagerCNI', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('except:type:wifi');
  });
});

describe('IptablesForwardDrop: who fixes a dropping FORWARD hook, from the roles kubespray runs on this node', () => {
  // ufw as its package leaves it once an admin ran `ufw enable`: ENABLED=yes, the shipped DEFAULT_FORWARD_POLICY="DROP", its unit enabled.
  const UFW: Tree = {
    'lib/systemd/system/ufw.service':
      '[Unit]\nDescription=Uncomplicated firewall\nDefaultDependencies=no\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=/lib/ufw/ufw-init start quiet\n\n[Install]\nWantedBy=multi-user.target\n',
    'etc/systemd/system/multi-user.target.wants/ufw.service': { link: '/lib/systemd/system/ufw.service' },
    'etc/default/ufw': 'IPV6=yes\nDEFAULT_INPUT_POLICY="DROP"\nDEFAULT_OUTPUT_POLICY="ACCEPT"\nDEFAULT_FORWARD_POLICY="DROP"\n',
    'etc/ufw/ufw.conf': 'ENABLED=yes\nLOGLEVEL=low\n',
  };
  const CALICO_TASKS = 'opt/ks/kubespray/roles/network_plugin/calico/tasks/main.yml';
  const accepting = (when: string) =>
    `---\n- name: Accept forwarded pod traffic\n  ansible.builtin.iptables:\n    chain: FORWARD\n    policy: ACCEPT\n  when: ${when}\n`;
  const hostWith = (extra: Tree) => ({ ...server({ extra }), ...inventory({ vars: ['kube_network_plugin=calico'] }), ...KUBEADM_ROLES });
  const forward = (fs: Finding[]) => fs.filter((f) => f.check === 'IptablesForwardDrop');

  it('no role sets the policy or accepts on FORWARD: the operator, with the fix for ufw, a warning', async () => {
    const fs = forward(await acceptance(hostWith(UFW)));
    expect(brief(fs)).toEqual([['IptablesForwardDrop', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('at the next boot (ufw: /etc/ufw/ufw.conf:1 ENABLED=yes, /etc/default/ufw:4 DEFAULT_FORWARD_POLICY="DROP"');
    expect(fs[0]!.message).toContain('set DEFAULT_FORWARD_POLICY="ACCEPT" in /etc/default/ufw and run ufw reload');
  });

  it("the network plugin's role sets FORWARD to ACCEPT: still the operator's, since ufw sets DROP again at every boot, citing the task", async () => {
    const fs = forward(await acceptance(hostWith({ ...UFW, [CALICO_TASKS]: accepting('true') })));
    expect(brief(fs)).toEqual([['IptablesForwardDrop', 'warning', false, false]]);
    expect(fs[0]!.message).toContain(
      'roles/network_plugin/calico/tasks/main.yml:2 Accept forwarded pod traffic accepts it when cluster.yml runs, but ufw sets the drop again',
    );
    expect(fs[0]!.evidence).toContain('roles/network_plugin/calico/tasks/main.yml:2 Accept forwarded pod traffic');
  });

  it('such a task whose run is decided at run time: unknown, naming it', async () => {
    const fs = forward(
      await acceptance(
        hostWith({ ...UFW, [CALICO_TASKS]: `---\n- name: Probe\n  command: /bin/true\n  register: probe\n${accepting('probe.rc == 0').slice(4)}` }),
      ),
    );
    expect(brief(fs)).toEqual([['IptablesForwardDrop', 'warning', false, true]]);
    expect(fs[0]!.message).toContain('Accept forwarded pod traffic: whether it runs is decided at run time');
  });

  it('ufw installed but not enabled (ENABLED=no, as the package leaves it): no line', async () => {
    expect(forward(await acceptance(hostWith({ ...UFW, 'etc/ufw/ufw.conf': 'ENABLED=no\nLOGLEVEL=low\n' })))).toEqual([]);
  });

  // ufw-init applies DEFAULT_FORWARD_POLICY to ip6tables too with IPV6=yes (the shipped value).
  const withStack = (v: string) => ({ ...server({ extra: UFW }), ...inventory({ vars: ['kube_network_plugin=calico', `ipv6_stack=${v}`] }), ...KUBEADM_ROLES });
  it('the inventory asks for IPv6 (ipv6_stack=true): the ip6tables drop is named too, with the variable and where it is set', async () => {
    const fs = forward(await acceptance(withStack('true')));
    expect(brief(fs)).toEqual([['IptablesForwardDrop', 'warning', false, false]]);
    expect(fs[0]!.message).toContain(
      'drops forwarded IPv6 packets by default at the next boot (ufw (IPv6): /etc/ufw/ufw.conf:1 ENABLED=yes, /etc/default/ufw:1 IPV6=yes',
    );
    expect(fs[0]!.message).toMatch(/\(ipv6_stack is true for this node \([^)]*:\d+\)\)/);
  });
  it('an IPv4-only inventory (ipv6_stack=false): IPv6 not judged, said in the evidence, not in the line', async () => {
    const fs = forward(await acceptance(withStack('false')));
    expect(brief(fs)).toEqual([['IptablesForwardDrop', 'warning', false, false]]);
    expect(fs[0]!.message).not.toContain('IPv6');
    expect((fs[0]!.evidence ?? []).join('\n')).toMatch(/^IPv6 \(the ip6 tables\) not judged: ipv6_stack is false for this node \(.*:\d+\)$/m);
  });
});

describe('ControlPlanePortsFirewalled: who opens the ports, from the roles kubespray runs on this node', () => {
  const NFTABLES: Tree = {
    'lib/systemd/system/nftables.service':
      '[Unit]\nDescription=nftables\n\n[Service]\nType=oneshot\nExecStart=/usr/sbin/nft -f /etc/nftables.conf\n\n[Install]\nWantedBy=sysinit.target\n',
    'etc/systemd/system/sysinit.target.wants/nftables.service': { link: '/lib/systemd/system/nftables.service' },
    'etc/nftables.conf':
      'flush ruleset\ntable inet filter {\n  chain input {\n    type filter hook input priority 0; policy drop;\n    ct state established,related accept\n    tcp dport { 22, 6443 } accept\n  }\n}\n',
  };
  it('an nftables.conf accepting ssh and the API server only: the other ports named, the operator allows them', async () => {
    const fs = (await acceptance({ ...server({ extra: NFTABLES }), ...inventory(), ...KUBEADM_ROLES })).filter(
      (f) => f.check === 'ControlPlanePortsFirewalled',
    );
    expect(brief(fs)).toEqual([['ControlPlanePortsFirewalled', 'warning', false, false]]);
    expect(fs[0]!.message).toContain('2379, 2380, 10250, 10257, 10259 at boot (nftables): dropped at /etc/nftables.conf:4');
    expect(fs[0]!.message).toContain('configures ufw, firewalld or iptables');
  });
});
