// FreeSpace: kubelet's hard eviction thresholds against statfs of nodefs and imagefs.
import { describe, expect, it } from 'vitest';
import { freeSpaceCheck } from '../../src/acceptance/free-space.js';
import { evictionThresholds } from '../../src/acceptance/eviction.js';
import { known, notKnown } from '../../src/acceptance/checker.js';
import { GiB, ROOMY, passingFacts as facts } from '../helpers/acceptance-facts.js';

// kubelet's hard eviction defaults on Linux, written out from kubernetes/kubernetes
// pkg/kubelet/eviction/defaults_linux.go: nodefs.available<10%, nodefs.inodesFree<5%,
// imagefs.available<15%, imagefs.inodesFree<5%; a threshold is "signal < value" (evicted below it).
describe("FreeSpace: kubelet's hard eviction thresholds for nodefs and imagefs, before kubelet first starts", () => {
  const disk = (usage: typeof ROOMY, imagefs: typeof ROOMY | null = usage) =>
    facts({ diskSpace: known({ nodefs: { dir: '/var/lib/kubelet', usage }, imagefs: imagefs && { dir: '/var/lib/containerd', usage: imagefs } }) });
  it('a roomy disk passes; 1.5 GiB of 20 GiB (7.5 %) is under both the 10 % nodefs and the 15 % imagefs threshold of one shared file system', () => {
    expect(freeSpaceCheck.check(facts())).toEqual({ warnings: [], errors: [] });
    const r = freeSpaceCheck.check(disk({ ...ROOMY, availableBytes: 1.5 * GiB }));
    expect(r).toEqual({
      warnings: [
        "nodefs.available on the file system of /var/lib/kubelet: 1.5 GiB available (7.5% of 20.0 GiB), under kubelet's hard eviction threshold nodefs.available<10% (defaults)",
        "imagefs.available on the file system of /var/lib/containerd: 1.5 GiB available (7.5% of 20.0 GiB), under kubelet's hard eviction threshold imagefs.available<15% (defaults)",
      ],
      errors: [],
    });
  });
  it('2.5 GiB of 20 GiB (12.5 %) is above nodefs 10 % but under imagefs 15 %; inodes are judged the same way; btrfs (no inode count) has no inode signal', () => {
    expect(freeSpaceCheck.check(disk({ ...ROOMY, availableBytes: 2.5 * GiB }))).toMatchObject({
      warnings: [expect.stringMatching(/^imagefs\.available .*\(12\.5% of 20\.0 GiB\)/)],
    });
    // 5 % of 1,310,720 inodes is 65,536: 65,535 free is under it, 65,536 is not.
    expect(freeSpaceCheck.check(disk({ ...ROOMY, freeInodes: 65_535 }, null))).toMatchObject({
      warnings: [expect.stringMatching(/^nodefs\.inodesFree .*: 65535 inodes free/)],
    });
    expect(freeSpaceCheck.check(disk({ ...ROOMY, freeInodes: 65_536 }, null))).toEqual({ warnings: [], errors: [] });
    expect(freeSpaceCheck.check(disk({ ...ROOMY, inodes: 0, freeInodes: 0 }))).toEqual({ warnings: [], errors: [] });
  });
  it("kubespray's eviction_hard replaces kubelet's defaults whole: a signal it does not name has no threshold", () => {
    const only = evictionThresholds({ 'nodefs.available': '3Gi', 'memory.available': '500Mi' }, 'inventory eviction_hard');
    expect(only).toEqual(known({ thresholds: { 'nodefs.available': '3Gi' }, from: "kubespray's inventory eviction_hard" }));
    const r = freeSpaceCheck.check({ ...disk({ ...ROOMY, availableBytes: 2.5 * GiB }), eviction: only });
    expect(r).toMatchObject({
      warnings: [expect.stringMatching(/^nodefs\.available .*threshold nodefs\.available<3Gi \(kubespray's inventory eviction_hard\)$/)],
    });
    expect(evictionThresholds({}, 'x:1 eviction_hard')).toMatchObject(known({ thresholds: { 'imagefs.available': '15%' } }));
    expect(evictionThresholds(['nodefs.available<1Gi'], 'x:1 eviction_hard')).toEqual(notKnown('x:1 eviction_hard is ["nodefs.available<1Gi"], not a mapping'));
  });
  it('offline or without a checkout: skipped with the reason', () => {
    expect(freeSpaceCheck.check(facts({ diskSpace: notKnown('offline') }))).toEqual({ skipped: 'offline' });
    expect(freeSpaceCheck.check(facts({ eviction: notKnown('no checkout') }))).toEqual({ skipped: 'no checkout' });
  });
});
