// Podman hosts: Debian 12's podman 4.3.1 (package layer `podman`, lib/layer.mjs), rootful, a container listening on
// the entry's port (10250 when free) with --network=host, the way a monitoring agent or a small API is run. What
// brings it back at boot is either the unit `podman generate systemd --new --files` writes (enabled, as its man page
// says to) or, with no unit, its restart policy always and podman-restart.service. Quadlets (a .container file in
// /etc/containers/systemd) are not here: their generator came with podman 4.4, and Debian 12 (and its backports) has
// 4.3.1 only, so on this Debian a quadlet file brings nothing back. The image is made offline: podman import of a tar
// holding Debian's static busybox; its command is busybox httpd, a listener.
//
// Network=host, not a published port: the farm boots with --private-network and a published port would need
// podman's CNI bridge and iptables rules inside it; with the host network the container's own process holds the
// port in its libpod-ID.scope, as on a real host. runc needs keyctl and bpf, which nspawn filters by default (the
// same option as the docker entries'; a real host filters neither).
const NSPAWN = ['--system-call-filter=@keyring bpf'];
// The layer installs Debian's runc, which ContainerRuntimeCollision rightly names (kubespray removes it): the entry
// that wants that check silent cannot share a host with podman (seen in a full farm run, seed 53).
const NOT_BESIDE = ['containerd-config-systemd'];
const PODMAN_UNITS = 'podman.service podman.socket podman-restart.service podman-auto-update.timer';

// Run in the recipe's setup (systemd-nspawn, not booted). The hard ulimits the container gets are the farm's own:
// rootful podman asks for nofile 1048576, which the farm (no CAP_SYS_RESOURCE) cannot raise to.
const create = (name, port, extra) => [
  'mkdir -p /var/tmp/farm-img/bin && cp /bin/busybox /var/tmp/farm-img/bin/busybox',
  'podman image exists localhost/farm-busybox:1 || { tar -C /var/tmp/farm-img -cf /var/tmp/farm-img.tar bin && podman import /var/tmp/farm-img.tar localhost/farm-busybox:1 >/dev/null; }',
  'rm -rf /var/tmp/farm-img /var/tmp/farm-img.tar',
  "nf=$(awk '/^Max open files/ {print $5}' /proc/self/limits); np=$(awk '/^Max processes/ {print $4}' /proc/self/limits)",
  `podman create --pull=never --name ${name} --network=host ${extra} --ulimit nofile=$nf:$nf --ulimit nproc=$np:$np localhost/farm-busybox:1 /bin/busybox httpd -f -p ${port} >/dev/null`,
  // as podman's postinst leaves them on a real host (the layer has them disabled)
  `systemctl enable ${PODMAN_UNITS}`,
];
const generatedUnit = (name, port) => [
  ...create(name, port, ''),
  `(cd /etc/systemd/system && podman generate systemd --new --files --name ${name} >/dev/null)`,
  // --new: the unit creates the container at every start (podman run --replace --rm); the one made here is not needed.
  `podman rm ${name} >/dev/null`,
  `systemctl enable container-${name}.service`,
];

// What podman itself says of the container (lib/judge.mjs probeProblems): its state, or absent once removed (--rm).
const probe = (name) => ({
  [`/farm/probes.d/podman-${name}`]: {
    mode: 0o755,
    content: `#!/bin/sh\npodman container inspect --format '{{.State.Status}} {{.HostConfig.RestartPolicy.Name}}' ${name} 2>/dev/null || echo absent\n`,
  },
});

const podmanHost = (name, setup) => ({
  port: true,
  preferPort: 10250,
  layers: ['podman'],
  nspawn: NSPAWN,
  // the container starts a moment after its unit (podman run -d, then sd-notify from conmon)
  late: 2,
  recipe: ({ port }) => ({ files: probe(name), setup: setup(name, port), listens: [port] }),
});

export default [
  {
    id: 'podman-generated-unit-10250',
    ...podmanHost('agent10250', generatedUnit),
    conflicts: ['podman-generated-unit-stop-10250', 'podman-restart-always-10250', ...NOT_BESIDE],
    wild: 'podman hosts (Debian 12, podman 4.3) running a container from "podman generate systemd --new --files" units enabled in /etc/systemd/system',
    // Not in stop_containers: the plan names the container and its unit and hands it to a person; nothing stops it.
    probes: { 'podman-agent10250': { 'after-apply': 'running', 'at-boot': 'running' } },
    says: () => [
      'podman container',
      '"agent10250"',
      'container-agent10250.service (/etc/systemd/system/container-agent10250.service:',
      'starts it with podman; it is enabled',
      'Run: systemctl disable --now container-agent10250.service',
    ],
  },
  {
    id: 'podman-generated-unit-stop-10250',
    ...podmanHost('web10250', generatedUnit),
    // stop_containers names it: apply stops and disables (or masks) its generated unit; podman itself keeps running.
    kept: true,
    conflicts: ['podman-generated-unit-10250', 'podman-restart-always-10250', ...NOT_BESIDE],
    portFree: { stop_containers: ['web10250'] },
    wild: 'the same podman host whose admin lets the tool stop that one container (stop_containers), podman and its other containers left alone',
    runs: ['podman.socket', 'podman-restart.service'],
    // Stopped (its unit's podman run --rm removes it) after apply and after the reboot; --rollback starts the unit again.
    probes: { 'podman-web10250': { 'after-apply': 'absent', 'at-boot': 'absent', 'after-rollback': 'running' } },
    says: () => ['podman container', '"web10250"', 'named in stop_containers, is started by container-web10250.service'],
    rollback: true,
  },
  {
    id: 'podman-restart-always-10250',
    ...podmanHost('always10250', (name, port) => create(name, port, '--restart=always')),
    conflicts: ['podman-generated-unit-10250', 'podman-generated-unit-stop-10250', ...NOT_BESIDE],
    wild: 'podman hosts with "podman run -d --restart=always" containers and no unit: podman-restart.service starts them at boot',
    // Named in stop_containers, and still left to a person: podman 4.3 cannot set its restart policy to no (podman
    // update has no --restart), and podman-restart.service would start it again at the reboot.
    portFree: { stop_containers: ['always10250'] },
    probes: { 'podman-always10250': { 'after-apply': 'running always', 'at-boot': 'running always' } },
    says: () => [
      'podman container',
      '"always10250"',
      'podman-restart.service starts every container whose restart policy is always at boot (it is enabled)',
      '"always10250" is named in stop_containers but not stopped: no unit starts it',
    ],
  },
];
