// One apply observes the sysctl.d tree twice: once for the plan, once to
// verify. The reports (kubespray's ordering findings) use the plan's
// observation, and no provider verifies itself by observing again.
import type { SysctlFileSpec } from '../../src/resources/sysctl-file/spec.js';
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dirent } from 'node:fs';
import { Host } from '../../src/host.js';
import type { DesiredState } from '../../src/desired-state.js';
import { makePlan } from '../../src/reconcile/plan.js';
import { hostReports } from '../../src/reconcile/host-reports.js';
import { applyPlan } from '../../src/reconcile/apply.js';
import { verifyConverged } from '../../src/reconcile/verify.js';
import { applyContext } from '../helpers/door.js';
import { buildTree } from '../helpers/tree.js';
import { observeBeforeState } from '../../src/reconcile/before-state.js';
import { jsonText } from '../../src/reconcile/reports.js';
import { parseDesiredState } from '../../src/reconcile/load.js';

const temps: string[] = [];
afterEach(async () => {
  await Promise.all(temps.splice(0).map((d) => rm(d, { recursive: true, force: true })));
});

/** A host that counts how often /etc/sysctl.d is listed: once per observation of the sysctl tree. */
class CountingHost extends Host {
  sysctlTreeReads = 0;
  override async readDir(target: string): Promise<Dirent[] | null> {
    if (target === '/etc/sysctl.d') this.sysctlTreeReads++;
    return super.readDir(target);
  }
}

const desired: DesiredState = {
  source: 'desired-state.yaml',
  reports_dir: '/root/ks/preflight',
  kubespray: { dir: '/opt/ks/kubespray', inventory: '/root/ks/inventory/lab/inventory.ini', node: 'node1' },
  facts: { source: 'native' },
  first_boot: 'off',
  resources: [{ type: 'SysctlFile', file: '/etc/sysctl.d/k8s.conf', settings: { 'net.ipv4.ip_forward': 1 }, conflict_policy: 'resolve' } as SysctlFileSpec],
};

describe('one apply reads the sysctl tree', () => {
  it('twice: for the plan (the reports reuse it) and for the engine verification', async () => {
    const root = await mkdtemp(path.join(tmpdir(), 'observe-once-'));
    temps.push(root);
    await cp(path.resolve('test/fixtures/kubespray-basic'), path.join(root, 'opt/ks/kubespray'), { recursive: true });
    buildTree(root, {
      'root/ks/inventory/lab/inventory.ini': '[kube_control_plane]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\n',
      'etc/sysctl.d/zz-hardening.conf': 'net.ipv4.ip_forward = 0\n',
    });
    const host = new CountingHost({ root });

    // What runApply does: plan, reports, apply, observe again, verify.
    const plan = await makePlan(host, desired);
    const extra = await hostReports(host, desired, () => {}, plan);
    const afterPlan = host.sysctlTreeReads;
    const result = await applyPlan(host, plan, await applyContext(host));
    const after = await makePlan(host, desired);

    // The reports did use the tree: kubespray's file is beaten by zz-hardening.conf before the resolve.
    expect(extra.findings.some((f) => f.message.includes('/etc/sysctl.d/zz-hardening.conf:1 sorts after'))).toBe(true);
    expect(result.failures).toEqual([]);
    expect(verifyConverged(after)).toEqual([]);
    expect(afterPlan).toBe(1);
    expect(host.sysctlTreeReads).toBe(2);
  });
});

/**
 * A live fixture host (its /proc is plain files under the root) that counts
 * reads of the kernel files before.json describes, and runs no command.
 */
class KernelCountingHost extends Host {
  readonly reads = new Map<string, number>();
  override async readKernel(target: string): Promise<string | null> {
    this.reads.set(target, (this.reads.get(target) ?? 0) + 1);
    return super.readKernel(target);
  }
}

/** A temp root holding `tree`, removed after the test. */
async function fixtureRoot(prefix: string, tree: Parameters<typeof buildTree>[1]): Promise<string> {
  const root = await mkdtemp(path.join(tmpdir(), prefix));
  temps.push(root);
  buildTree(root, tree);
  return root;
}

/** A live KernelCountingHost over the fixture `root`; every command fails. */
const kernelCountingHost = (root: string) =>
  new KernelCountingHost({
    root,
    live: true,
    runner: async (cmd, args) => ({ command: [cmd, ...args].join(' '), exitCode: 1, stdout: '', stderr: 'no command runs in this test' }),
  });

/** The desired state above with no kubespray section and these resources (YAML list lines). */
const withoutKubespray = (resources: string[]): DesiredState => ({
  ...desired,
  kubespray: null as never,
  resources: parseDesiredState(['reports_dir: /root/ks/preflight', 'resources:', ...resources, ''].join('\n'), 'd.yaml').resources,
});

const BEFORE_FILES = ['/proc/meminfo', '/proc/sys/net/ipv4/ip_forward', '/proc/modules', '/proc/net/tcp', '/proc/net/tcp6'];
const TCP_HEADER = '  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n';

describe('before.json is computed from the plan observations', () => {
  it('reads no kernel file the providers already read, and says the same bytes as reading them afresh', async () => {
    const root = await fixtureRoot('before-state-', {
      'proc/meminfo': 'MemTotal:        2030000 kB\nSwapTotal:       1048572 kB\nSwapFree:        1048572 kB\n',
      'proc/swaps': 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n',
      'proc/sys/net/ipv4/ip_forward': '0\n',
      'proc/sys/kernel/osrelease': '6.1.0-test\n',
      'proc/modules': 'br_netfilter 32768 0 - Live 0x0000000000000000\nbridge 311296 1 br_netfilter, Live 0x0000000000000000\n',
      // 6443 (0x192B) listening on IPv4, 10250 (0x280A) on IPv6, 22 (0x0016) not a control-plane port.
      'proc/net/tcp':
        TCP_HEADER +
        '   0: 00000000:192B 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 11111 1 0000000000000000 100 0 0 10 0\n' +
        '   1: 00000000:0016 00000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 22222 1 0000000000000000 100 0 0 10 0\n',
      'proc/net/tcp6':
        TCP_HEADER +
        '   0: 00000000000000000000000000000000:280A 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000     0        0 33333 1 0000000000000000 100 0 0 10 0\n',
      'etc/fstab': '/swapfile none swap sw 0 0\n',
    });
    const host = kernelCountingHost(root);
    const all = withoutKubespray([
      '  - type: SwapOff',
      '  - type: ModulesLoad',
      '    file: /etc/modules-load.d/k8s.conf',
      '    modules: [overlay, br_netfilter]',
      '  - type: SysctlFile',
      '    file: /etc/sysctl.d/k8s.conf',
      '    settings: { net.ipv4.ip_forward: 1 }',
      '  - type: PortFree',
    ]);

    const plan = await makePlan(host, all);
    const afterPlan = Object.fromEntries(BEFORE_FILES.map((f) => [f, host.reads.get(f) ?? 0]));
    const before = await observeBeforeState(host, plan);
    const afterBefore = Object.fromEntries(BEFORE_FILES.map((f) => [f, host.reads.get(f) ?? 0]));

    // The fixture, read by hand: SwapTotal 1048572 kB, ip_forward 0, br_netfilter in /proc/modules, 6443 and 10250 listening.
    const expected = { swap_total_kb: 1048572, ip_forward: 0, br_netfilter: true, busy_ports: [6443, 10250] };
    expect(jsonText(before)).toBe(jsonText(expected));
    // The plan read each file once; the before-state read none of them again.
    expect(afterPlan).toEqual({ '/proc/meminfo': 1, '/proc/sys/net/ipv4/ip_forward': 1, '/proc/modules': 1, '/proc/net/tcp': 1, '/proc/net/tcp6': 1 });
    expect(afterBefore).toEqual(afterPlan);

    // With no resource that observed them, every field is read afresh (as before.json always was): the same bytes.
    const fresh = await observeBeforeState(host, { ...plan, resources: [] });
    expect(jsonText(fresh)).toBe(jsonText(before));
    expect(Object.fromEntries(BEFORE_FILES.map((f) => [f, (host.reads.get(f) ?? 0) - afterBefore[f]!]))).toEqual({
      '/proc/meminfo': 1,
      '/proc/sys/net/ipv4/ip_forward': 1,
      '/proc/modules': 1,
      '/proc/net/tcp': 1,
      '/proc/net/tcp6': 1,
    });
  });
});

describe('facts.json is computed from the plan observations', () => {
  it("takes MemTotal from SwapOff's reading and the kernel release from ModulesLoad's, and says what --facts (no plan) says", async () => {
    const root = await fixtureRoot('facts-observed-', {
      'proc/meminfo': 'MemTotal:        2030000 kB\nSwapTotal:             0 kB\n',
      'proc/swaps': 'Filename\t\t\t\tType\t\tSize\t\tUsed\t\tPriority\n',
      'proc/modules': 'overlay 151552 0 - Live 0x0000000000000000\n',
      'proc/self/personality': '00000000\n',
      'proc/sys/kernel/osrelease': '6.1.0-31-amd64\n',
      'proc/sys/kernel/arch': 'x86_64\n',
      'proc/cpuinfo': [0, 1]
        .map(
          (i) =>
            `processor\t: ${i}\nvendor_id\t: GenuineIntel\nmodel name\t: QEMU\nphysical id\t: 0\nsiblings\t: 2\ncore id\t\t: ${i}\ncpu cores\t: 2\nflags\t\t: fpu vme\n`,
        )
        .join('\n'),
      'etc/os-release': 'NAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
      'etc/debian_version': '12.8\n',
    });
    const host = kernelCountingHost(root);
    const facts = withoutKubespray(['  - type: SwapOff', '  - type: ModulesLoad', '    file: /etc/modules-load.d/k8s.conf', '    modules: [overlay]']);
    const FACT_FILES = ['/proc/meminfo', '/proc/sys/kernel/osrelease'];
    const count = () => Object.fromEntries(FACT_FILES.map((f) => [f, host.reads.get(f) ?? 0]));

    const plan = await makePlan(host, facts);
    const afterPlan = count();
    const fromPlan = (await hostReports(host, facts, () => {}, plan)).reports['facts.json'];
    const afterReports = count();

    // Read by hand from the fixture: 2030000 kB // 1024 = 1982; uname -r is osrelease (personality 0).
    expect(fromPlan).toMatchObject({ memtotal_mb: 1982, processor_vcpus: 2, distribution: 'Debian', kernel: '6.1.0-31-amd64' });
    // The plan read each once (ModulesLoad reads the release once for modules.builtin and modules.dep); facts read neither again.
    expect(afterPlan).toEqual({ '/proc/meminfo': 1, '/proc/sys/kernel/osrelease': 1 });
    expect(afterReports).toEqual(afterPlan);

    // --facts has no plan: it reads each once itself, and facts.json has the same bytes.
    const alone = (await hostReports(host, facts, () => {}, null)).reports['facts.json'];
    expect(jsonText(alone)).toBe(jsonText(fromPlan));
    expect(Object.fromEntries(FACT_FILES.map((f) => [f, (host.reads.get(f) ?? 0) - afterReports[f]!]))).toEqual({
      '/proc/meminfo': 1,
      '/proc/sys/kernel/osrelease': 1,
    });
  });
});
