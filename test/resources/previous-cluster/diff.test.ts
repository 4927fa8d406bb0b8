// PreviousCluster's plan on a live host, pure (resources/previous-cluster/diff.ts): what only a running
// system has (an active unit, pods, CNI interfaces, a unit enabled by a package's vendor link) and how each
// is said. The commands are the tools' own (crictl rmp's --all/--force, ip link delete, systemctl mask);
// the tree-level behaviour is shown on real roots and booted hosts by the other previous-cluster tests.
import { describe, expect, it } from 'vitest';
import { diffPreviousCluster } from '../../../src/resources/previous-cluster/diff.js';
import type { PreviousClusterObserved } from '../../../src/resources/previous-cluster/observe.js';
import { previousClusterProvider } from '../../../src/resources/previous-cluster/provider.js';
import { DEFAULT_WARN_ABOVE_BYTES } from '../../../src/resources/previous-cluster/spec.js';

const base = (o: Partial<PreviousClusterObserved>): PreviousClusterObserved => ({
  policy: 'reset',
  live: true,
  evidence: [],
  dirs: [],
  units: [],
  chains: [],
  nftTables: null,
  ...o,
});
const kubelet = {
  unit: 'kubelet.service',
  file: '/lib/systemd/system/kubelet.service',
  masked: false,
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

  it('a masked unit is only stopped: its vendor link starts nothing at boot, so no line to mask it and no promise taken back', () => {
    const masked = { ...kubelet, file: '/etc/systemd/system/kubelet.service', masked: true };
    const c = diffPreviousCluster(base({ units: [masked] }));
    expect(c.map((x) => [x.id, x.action, x.withdraws ?? []])).toEqual([['stop-kubelet.service', 'stop', []]]);
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

  it("kube-proxy's nftables tables are one operator line deleting exactly them; an unreadable listing is a warning, not an empty plan", () => {
    const tables = [
      { family: 'ip', name: 'kube-proxy' },
      { family: 'ip6', name: 'kube-proxy' },
    ];
    const c = diffPreviousCluster(base({ nftTables: { tables } }));
    expect(c.map((x) => [x.id, x.action, x.withdraws])).toEqual([['nft-tables', 'operator', []]]);
    expect(c[0]!.summary).toBe("nftables tables kube-proxy's nftables mode made: ip kube-proxy, ip6 kube-proxy");
    expect(c[0]!.operator).toMatch(/: nft delete table ip kube-proxy; nft delete table ip6 kube-proxy$/);
    expect(diffPreviousCluster(base({ nftTables: { tables: [] } }))).toEqual([]);
    const spec = { type: 'PreviousCluster' as const, policy: 'reset' as const, warn_above_bytes: DEFAULT_WARN_ABOVE_BYTES };
    const unread = base({ nftTables: { error: 'nft -j list tables exited 1: Operation not permitted' } });
    expect(diffPreviousCluster(unread)).toEqual([]);
    expect(previousClusterProvider.warnings!(spec, unread)).toEqual([
      "PreviousCluster: nft -j list tables exited 1: Operation not permitted; kube-proxy's nftables tables are not known",
    ]);
  });

  it("a directory holding a package's files is not moved: an operator line names them and takes back its promise", () => {
    const cni = {
      path: '/etc/cni/net.d',
      kind: 'dir' as const,
      bytes: 60,
      files: 2,
      partial: false,
      mounts: [],
      packageFiles: [{ path: '/etc/cni/net.d/87-podman-bridge.conflist', package: 'podman' }],
    };
    const c = diffPreviousCluster(base({ dirs: [cni] }));
    expect(c.map((x) => [x.id, x.action, x.withdraws])).toEqual([['aside-/etc/cni/net.d', 'operator', [{ promise: 'absent:/etc/cni/net.d', from: 'apply' }]]]);
    expect(c[0]!.summary).toContain('/etc/cni/net.d/87-podman-bridge.conflist of podman');
    expect(diffPreviousCluster(base({ dirs: [{ ...cni, packageFiles: [] }] })).map((x) => [x.id, x.action])).toEqual([['aside-/etc/cni/net.d', 'move']]);
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

  it('verify after apply: what a reset clears still there, or a node unit still running, is unconverged; what it leaves to a person is not', () => {
    const spec = { type: 'PreviousCluster' as const, policy: 'reset' as const, warn_above_bytes: DEFAULT_WARN_ABOVE_BYTES };
    const after = base({
      evidence: [
        { path: '/var/lib/etcd', what: 'an etcd data directory', strong: false },
        { path: '/etc/systemd/system/kubelet.service', what: 'the unit file of kubelet.service', strong: true },
        { path: '/sys/class/net/cni0', what: 'an interface', strong: true },
      ],
      units: [
        { ...kubelet, file: '/etc/systemd/system/kubelet.service', files: ['/etc/systemd/system/kubelet.service'], vendorLinks: [], active: 'activating' },
      ],
    });
    expect(previousClusterProvider.unconverged!(spec, after)).toEqual([
      '/var/lib/etcd is still there (an etcd data directory)',
      '/etc/systemd/system/kubelet.service is still there (the unit file of kubelet.service)',
      'kubelet.service is still activating',
    ]);
    expect(previousClusterProvider.unconverged!({ ...spec, policy: 'report' }, base({ policy: 'report' }))).toEqual([]);
  });

  it('verify after apply: a directory left to a person because a package owns files in it is not unconverged; a movable one still is', () => {
    const spec = { type: 'PreviousCluster' as const, policy: 'reset' as const, warn_above_bytes: DEFAULT_WARN_ABOVE_BYTES };
    const cni = { path: '/etc/cni/net.d', kind: 'dir' as const, bytes: 60, files: 2, partial: false, mounts: [] };
    const evidence = [{ path: '/etc/cni/net.d', what: 'CNI network configuration (87-podman-bridge.conflist)', strong: false }];
    const owned = [{ path: '/etc/cni/net.d/87-podman-bridge.conflist', package: 'podman' }];
    expect(previousClusterProvider.unconverged!(spec, base({ evidence, dirs: [{ ...cni, packageFiles: owned }] }))).toEqual([]);
    expect(previousClusterProvider.unconverged!(spec, base({ evidence, dirs: [{ ...cni, packageFiles: [] }] }))).toEqual([
      '/etc/cni/net.d is still there (CNI network configuration (87-podman-bridge.conflist))',
    ]);
  });
});
