// PreviousCluster's plan on a live host, pure (resources/previous-cluster/diff.ts): what only a running
// system has (an active unit, pods, CNI interfaces, a unit enabled by a package's vendor link) and how each
// is said. The commands are the tools' own (crictl rmp's --all/--force, ip link delete, systemctl mask);
// the tree-level behaviour is shown on real roots and booted hosts by the other previous-cluster tests.
import { describe, expect, it } from 'vitest';
import { diffPreviousCluster } from '../../src/resources/previous-cluster/diff.js';
import type { PreviousClusterObserved } from '../../src/resources/previous-cluster/observe.js';

const base = (o: Partial<PreviousClusterObserved>): PreviousClusterObserved => ({
  policy: 'reset',
  live: true,
  evidence: [],
  dirs: [],
  units: [],
  chains: [],
  ...o,
});
const kubelet = {
  unit: 'kubelet.service',
  file: '/lib/systemd/system/kubelet.service',
  files: [],
  active: 'active',
  links: [],
  vendorLinks: ['/lib/systemd/system/multi-user.target.wants/kubelet.service'],
};

describe('PreviousCluster on a live host', () => {
  it('under report plans nothing, whatever it saw', () => {
    expect(diffPreviousCluster(base({ policy: 'report', units: [kubelet] }))).toEqual([]);
  });

  it("stops an active unit; a package's vendor link is an operator line to mask it, which takes back its promise at boot", () => {
    const c = diffPreviousCluster(base({ units: [kubelet] }));
    expect(c.map((x) => [x.id, x.action])).toEqual([
      ['stop-kubelet.service', 'stop'],
      ['vendor-kubelet.service', 'operator'],
    ]);
    expect(c[1]).toMatchObject({ operator: 'mask it: systemctl mask kubelet.service', withdraws: [{ promise: 'unit-down:kubelet.service', from: 'boot' }] });
  });

  it('what the door cannot undo is an operator line with the exact command, taking back none of its promises', () => {
    const c = diffPreviousCluster(
      base({
        evidence: [
          { path: '/var/lib/containerd/io.containerd.grpc.v1.cri/sandboxes', what: 'pods', strong: true },
          { path: '/sys/class/net/cni0', what: 'an interface', strong: true },
          { path: '/sys/class/net/flannel.1', what: 'an interface', strong: true },
        ],
      }),
    );
    expect(c.map((x) => [x.id, x.operator, x.withdraws])).toEqual([
      ['cri-pods', expect.stringMatching(/: crictl rmp --all --force$/), []],
      ['cni-interfaces', expect.stringMatching(/: ip link delete cni0; ip link delete flannel\.1$/), []],
    ]);
  });

  it('offline (an image) has no runtime line and no stop: only the links and the moves', () => {
    const c = diffPreviousCluster(
      base({
        live: false,
        units: [
          {
            ...kubelet,
            active: null,
            vendorLinks: [],
            file: '/etc/systemd/system/kubelet.service',
            files: ['/etc/systemd/system/kubelet.service'],
            links: ['/etc/systemd/system/multi-user.target.wants/kubelet.service'],
          },
        ],
        evidence: [{ path: '/sys/class/net/cni0', what: 'an interface', strong: true }],
      }),
    );
    expect(c.map((x) => [x.id, x.action, x.runtime ?? false])).toEqual([
      ['disable-kubelet.service', 'disable', false],
      ['aside-/etc/systemd/system/kubelet.service', 'move', false],
    ]);
  });
});
