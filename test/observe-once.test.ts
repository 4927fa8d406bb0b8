// One apply observes the sysctl.d tree twice: once for the plan, once to
// verify. The reports (kubespray's ordering findings) use the plan's
// observation, and no provider verifies itself by observing again.
import { cp, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import type { Dirent } from 'node:fs';
import { Host } from '../src/host.js';
import type { DesiredState } from '../src/desired-state.js';
import { makePlan } from '../src/reconcile/plan.js';
import { hostReports } from '../src/reconcile/host-reports.js';
import { applyPlan } from '../src/reconcile/apply.js';
import { verifyConverged } from '../src/reconcile/verify.js';
import { applyContext } from './helpers/door.js';
import { buildTree } from './helpers/tree.js';

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
  resources: [{ type: 'SysctlFile', file: '/etc/sysctl.d/k8s.conf', settings: { 'net.ipv4.ip_forward': 1 }, conflict_policy: 'resolve' }],
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
