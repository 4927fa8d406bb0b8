// ContainerRuntimeCollision: not a kubeadm check, what breaks after an
// install that succeeds. kubespray installs its own containerd and runc
// (binaries in /usr/local/bin, /etc/systemd/system/containerd.service, its
// /etc/containerd/config.toml); Debian's containerd, docker.io or runc
// packages left installed keep their binaries in /usr/bin, their units in
// /lib/systemd/system and, for docker.io, a containerd of their own on the
// same socket, and the next `apt upgrade` restarts or replaces them under the
// cluster. A config.toml whose runc options set SystemdCgroup = false
// (containerd's own `config default`) makes containerd manage cgroups with
// cgroupfs while kubespray's kubelet uses systemd: pods are restarted and
// the node flaps, unless kubespray writes that file anew.
// runtime-collision-who.ts says what kubespray does about each, from its
// roles/container-engine.
import type { Checker, RuntimeCollisionFacts } from './checker.js';
import { notJudged, pass } from './checker.js';
import { CONTAINERD_CONFIG, DPKG_STATUS } from './runtime-facts.js';

/** Each thing on the host that collides with kubespray's runtime, in words. */
export function collisions(f: RuntimeCollisionFacts): string[] {
  const out = f.packages.map((p) => `Debian's ${p.name} package is installed (${DPKG_STATUS}:${p.line}: ${p.status})`);
  if (f.systemdCgroupFalse !== null)
    out.push(`${CONTAINERD_CONFIG} sets SystemdCgroup = false in [${f.systemdCgroupFalse}] (cgroupfs, where kubelet uses systemd)`);
  return out;
}

export const containerRuntimeCollisionCheck: Checker = {
  name: 'ContainerRuntimeCollision',
  runsOn: 'every node',
  breaksLater: "a second container runtime, or containerd's cgroupfs, beside kubespray's containerd and kubelet",
  source:
    "kubespray roles/container-engine (containerd, runc, validate-container-engine); kubelet's cgroupDriver against containerd's SystemdCgroup (kubernetes.io container-runtimes)",
  check(f) {
    if (!f.runtimeCollision.known) return notJudged(f.runtimeCollision);
    const c = collisions(f.runtimeCollision.value);
    return c.length === 0 ? pass() : { warnings: c, errors: [] };
  },
};
