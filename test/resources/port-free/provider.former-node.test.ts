// A port held by a former Kubernetes node's processes: a container of a pod
// (its cgroup below kubepods, as kubelet makes it with either cgroup driver)
// or a kubelet. PortFree stops neither, and its operator line points to the
// FormerNode finding: stopping the one process frees nothing for long, since
// kubelet starts its static pods again. Cgroup paths are the ones kubelet
// writes (kubelet's cgroup_manager_linux.go: the systemd driver's
// kubepods-<qos>-pod<UID with _ for ->.slice, cgroupfs's /kubepods/<qos>/pod<UID>).
import { describe, expect, it } from 'vitest';
import { parseCgroup, kubePodOf } from '../../../src/systemd/cgroup.js';
import { portFreeProvider } from '../../../src/resources/port-free/provider.js';
import type { PortFreeSpec } from '../../../src/resources/port-free/spec.js';
import type { LivePortsObserved, PortHolder } from '../../../src/ports/observed.js';

const SCOPE = `cri-containerd-${'a1'.repeat(32)}.scope`;
const SYSTEMD_POD = `/kubepods.slice/kubepods-burstable.slice/kubepods-burstable-pod5d3f_11aa_4b2c.slice/${SCOPE}`;
const CGROUPFS_POD = `/kubepods/besteffort/pod5d3f-11aa-4b2c/${'b2'.repeat(32)}`;

const spec: PortFreeSpec = { type: 'PortFree', ports: [6443], protected_units: [], stop_spawner_units: [], mask: false, timeout_seconds: 5, disable_units: [] };

function observed(holder: PortHolder): LivePortsObserved {
  return {
    mode: 'live',
    busy: [{ port: 6443, listeners: [{ family: 'ipv4', address: '0.0.0.0', port: 6443, inode: 1 }], holders: [holder], activation: null }],
    selfUnit: null,
    unreadablePids: 0,
    units: {},
    crontabs: null,
    uids: {},
    supervisor: null,
  } as LivePortsObserved;
}

const holder = (comm: string, cgroup: string): PortHolder => ({
  pid: 4242,
  comm,
  placement: parseCgroup(`0::${cgroup}\n`),
  ancestry: null,
  mainHoldsSocket: null,
});

describe('kubePodOf', () => {
  it('names the pod of either cgroup driver, and nothing outside kubepods', () => {
    expect(kubePodOf(SYSTEMD_POD)).toBe('kubepods-burstable-pod5d3f_11aa_4b2c.slice');
    expect(kubePodOf(CGROUPFS_POD)).toBe('pod5d3f-11aa-4b2c');
    expect(kubePodOf('/kubepods.slice')).toBe('kubepods.slice');
    expect(kubePodOf(`/system.slice/${SCOPE}`)).toBeNull();
    expect(kubePodOf('/system.slice/kubelet.service')).toBeNull();
    expect(kubePodOf('/machine.slice/podman-pod1234.slice')).toBeNull();
  });
});

describe("a former node's holder", () => {
  for (const [driver, cgroup, pod] of [
    ['systemd', SYSTEMD_POD, 'kubepods-burstable-pod5d3f_11aa_4b2c.slice'],
    ['cgroupfs', CGROUPFS_POD, 'pod5d3f-11aa-4b2c'],
  ] as const) {
    it(`a pod's container (${driver} driver) is an operator line that points to the FormerNode finding`, () => {
      const [c] = portFreeProvider.diff(spec, observed(holder('kube-apiserver', cgroup)), { live: true });
      expect(c!.action).toBe('operator');
      expect(c!.operator).toContain('runs in a container');
      expect(c!.operator).toContain(`pid 4242 is a container of the Kubernetes pod ${pod}: this host was a Kubernetes node (see the FormerNode finding)`);
    });
  }

  it('a kubelet holding 10250 in kubelet.service: operator line, pointing to the finding', () => {
    const o = observed(holder('kubelet', '/system.slice/kubelet.service'));
    o.busy[0]!.port = 10250;
    const [c] = portFreeProvider.diff({ ...spec, ports: [10250] }, o, { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toContain('pid 4242 is a kubelet: this host was a Kubernetes node (see the FormerNode finding)');
  });

  it('a container outside kubepods (a plain docker container) says nothing of a former node', () => {
    const [c] = portFreeProvider.diff(spec, observed(holder('nginx', `/system.slice/docker-${'c3'.repeat(32)}.scope`)), { live: true });
    expect(c!.action).toBe('operator');
    expect(c!.operator).toContain('runs in a container');
    expect(c!.operator).not.toContain('FormerNode');
  });
});
