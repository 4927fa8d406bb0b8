// SystemVerification: k8s.io/system-validators' DefaultSysSpec, written out by
// hand: kernel 5.4, 5.10, 5.15 or 6+; cgroup v2 controllers cpu, cpuset,
// devices, freezer, memory, pids; optional hugetlb, io.
import { describe, expect, it } from 'vitest';
import type { CgroupFacts } from '../../src/acceptance/checker.js';
import { systemVerificationCheck } from '../../src/acceptance/system-verification.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { passingFacts as facts } from '../helpers/acceptance-facts.js';

describe('SystemVerification: the kernel release and the cgroup controllers', () => {
  it("kernels outside DefaultSysSpec's versions are an error; 5.4, 5.10, 5.15 and 6.x pass", () => {
    for (const bad of ['4.19.0-27-amd64', '5.11.0-1-amd64', '3.10.0-1160.el7.x86_64']) {
      expect(systemVerificationCheck.check(facts({ kernelRelease: known(bad) }))).toEqual({ warnings: [], errors: [`unsupported kernel release: ${bad}`] });
    }
    for (const good of ['5.4.0-150-generic', '5.10.0-28-amd64', '5.15.0-91-generic', '6.1.0-31-amd64', '6.12.22-amd64']) {
      expect(systemVerificationCheck.check(facts({ kernelRelease: known(good) }))).toEqual({ warnings: [], errors: [] });
    }
  });
  it('cgroup v2 without cpuset and pids: an error naming both; without hugetlb only: a warning', () => {
    const noCpusetPids: CgroupFacts = { version: 2, controllers: ['cpu', 'io', 'memory', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(noCpusetPids) }))).toEqual({ warnings: [], errors: ['missing required cgroups: cpuset pids'] });
    const noHugetlb: CgroupFacts = { version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'pids'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(noHugetlb) }))).toEqual({ warnings: ['missing optional cgroups: hugetlb'], errors: [] });
  });
  it('cgroup v2: devices and freezer are never in cgroup.controllers and count as present', () => {
    expect(systemVerificationCheck.check(facts({ cgroup: known({ version: 2, controllers: ['cpuset', 'cpu', 'io', 'memory', 'hugetlb', 'pids'] }) }))).toEqual({
      warnings: [],
      errors: [],
    });
  });
  it("cgroup v1: kubeadm's maintenance-mode warning, and v1's own list (cpuacct, devices, freezer needed)", () => {
    const v1: CgroupFacts = { version: 1, controllers: ['cpuset', 'cpu', 'cpuacct', 'blkio', 'memory', 'devices', 'freezer', 'pids', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(v1) }))).toEqual({
      warnings: ['cgroups v1 support is in maintenance mode, please migrate to cgroups v2'],
      errors: [],
    });
    const v1NoFreezer: CgroupFacts = { version: 1, controllers: ['cpuset', 'cpu', 'cpuacct', 'blkio', 'memory', 'devices', 'pids', 'hugetlb'] };
    expect(systemVerificationCheck.check(facts({ cgroup: known(v1NoFreezer) }))).toMatchObject({ errors: ['missing required cgroups: freezer'] });
  });
  it("a container (its controllers the manager's) is skipped with the reason", () => {
    expect(systemVerificationCheck.check(facts({ cgroup: notKnown('this is a container') }))).toEqual({ skipped: 'this is a container' });
  });
});
