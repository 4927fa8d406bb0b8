// Docker hosts: Debian's docker.io (package layer `docker`, lib/layer.mjs) with a container started by hand with
// --restart=always publishing the entry's port (6443 when free), the way a dev box or a small service host runs an
// API: docker-proxy holds the host port in docker.service's cgroup, the container's own process listens in its
// network namespace behind it, and dockerd starts the container again at every boot. The image is made offline
// (docker import of a tar holding Debian's static busybox); its command is busybox httpd, a listener.
//
// runc needs two system calls systemd-nspawn filters by default: keyctl (it gives each container a session
// keyring: "unable to join session keyring: operation not permitted") and bpf (the cgroup v2 device filter:
// "bpf_prog_query(BPF_CGROUP_DEVICE) failed: operation not permitted"); a real docker host filters neither.
const NSPAWN = ['--system-call-filter=@keyring bpf'];

// Run in the recipe's setup (systemd-nspawn, not booted): dockerd is started by hand to import the image and run the
// container once (dockerd's boot-time restore starts only restart=always containers that have run before), then
// stopped with SIGTERM, which stops the container without marking it stopped by hand; the units are enabled as
// docker.io's postinst leaves them on a real host.
const dockerRun = (name, port) => [
  'systemctl enable docker.service docker.socket containerd.service',
  '(containerd >/var/log/farm-containerd.log 2>&1 & echo $! > /run/farm-containerd.pid)',
  'i=0; until [ -S /run/containerd/containerd.sock ]; do i=$((i + 1)); [ $i -lt 100 ]; sleep 0.1; done',
  '(dockerd --containerd=/run/containerd/containerd.sock >/var/log/farm-dockerd.log 2>&1 & echo $! > /run/farm-dockerd.pid)',
  'i=0; until docker info >/dev/null 2>&1; do i=$((i + 1)); [ $i -lt 200 ] || { cat /var/log/farm-dockerd.log; exit 1; }; sleep 0.1; done',
  'rm -rf /tmp/farm-img && mkdir -p /tmp/farm-img/bin && cp /bin/busybox /tmp/farm-img/bin/busybox',
  'docker image inspect farm/busybox:1 >/dev/null 2>&1 || tar -C /tmp/farm-img -c bin | docker import - farm/busybox:1',
  `docker run -d --name ${name} --restart=always -p ${port}:6443 farm/busybox:1 /bin/busybox httpd -f -p 6443`,
  'kill -TERM $(cat /run/farm-dockerd.pid); while kill -0 $(cat /run/farm-dockerd.pid) 2>/dev/null; do sleep 0.1; done',
  'kill -TERM $(cat /run/farm-containerd.pid); while kill -0 $(cat /run/farm-containerd.pid) 2>/dev/null; do sleep 0.1; done',
  'rm -rf /tmp/farm-img /run/farm-dockerd.pid /run/farm-containerd.pid',
];

// dockerd sets the FORWARD policy to DROP (IptablesForwardDrop must then be named) and brings its own containerd: the
// entries that want those checks silent cannot share a host with it.
const NOT_BESIDE = ['nftables-stock-enabled', 'containerd-config-systemd'];

const dockerHost = (name) => ({
  port: true,
  preferPort: 6443,
  layers: ['docker'],
  nspawn: NSPAWN,
  // dockerd restores the container a moment after docker.service is up; docker-proxy binds the port then.
  late: 2,
  recipe: ({ port }) => ({
    // What docker itself says of the container: its restart policy and whether it runs (lib/judge.mjs probeProblems).
    files: {
      [`/farm/probes.d/docker-${name}`]: {
        mode: 0o755,
        content: `#!/bin/sh\ndocker inspect --format '{{.HostConfig.RestartPolicy.Name}} {{.State.Running}}' ${name}\n`,
      },
    },
    setup: dockerRun(name, port),
    listens: [port],
  }),
});

export default [
  {
    id: 'docker-restart-always-6443',
    ...dockerHost('api6443'),
    conflicts: ['docker-stop-containers-6443', ...NOT_BESIDE],
    wild: 'docker hosts with "docker run -d --restart=always -p 6443:6443" (a dev API, a registry mirror, a k3d or kind node left running)',
    // Not in stop_containers: the plan names the container and what brings it back, and hands it to a person;
    // nothing stops it, and dockerd starts it again at the reboot.
    probes: { 'docker-api6443': { 'after-apply': 'always true', 'at-boot': 'always true' } },
    says: ({ port }) => [
      `docker-proxy publishes -host-port ${port} to -container-ip`,
      '"api6443" (image farm/busybox:1, restart policy always',
      'docker.service is enabled and the restart policy always starts it again at every boot',
      'Run: docker update --restart=no api6443 && docker stop api6443',
    ],
  },
  {
    id: 'docker-stop-containers-6443',
    ...dockerHost('web6443'),
    // stop_containers names it: apply sets --restart=no and stops it through docker; dockerd keeps running.
    kept: true,
    conflicts: ['docker-restart-always-6443', ...NOT_BESIDE],
    portFree: { stop_containers: ['web6443'] },
    wild: 'the same docker host whose admin lets the tool stop that one container (stop_containers), dockerd and its other containers left running',
    runs: ['docker.service', 'containerd.service'],
    // Stopped with --restart=no after apply and after the reboot; --rollback (a third boot) restores always and starts it.
    probes: { 'docker-web6443': { 'after-apply': 'no false', 'at-boot': 'no false', 'after-rollback': 'always true' } },
    rollback: true,
  },
];
