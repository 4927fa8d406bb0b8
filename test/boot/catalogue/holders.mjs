// Whose process holds the port: a unit's main process in its shapes, a
// process a unit leaves behind, a supervisor's program, cron and at, a SysV
// script, a lingering user's manager, a login session.
const D = '/usr/local/sbin/tinyd';
const wants = (unit, from = `/etc/systemd/system/${unit}`) => ({ [`/etc/systemd/system/multi-user.target.wants/${unit}`]: { link: from } });
const unit = (desc, service) => `[Unit]\nDescription=${desc}\n\n[Service]\n${service.join('\n')}\n\n[Install]\nWantedBy=multi-user.target\n`;
const userUnit = (port) => `[Unit]\nDescription=user API\n\n[Service]\nExecStart=${D} ${port}\nRestart=always\n\n[Install]\nWantedBy=default.target\n`;
// A lingering user with an enabled user unit (what "loginctl enable-linger" and "systemctl --user enable" leave on disk).
const lingering = (user, port) => ({
  files: {
    [`/home/${user}/.config/systemd/user/user-api.service`]: userUnit(port),
    [`/home/${user}/.config/systemd/user/default.target.wants/user-api.service`]: { link: `/home/${user}/.config/systemd/user/user-api.service` },
    [`/var/lib/systemd/linger/${user}`]: '',
  },
  setup: [`id ${user} >/dev/null 2>&1 || useradd -m -s /bin/bash ${user}`, `chown -R ${user}:${user} /home/${user}`],
  listens: [port],
});

export default [
  {
    id: 'forking-with-pidfile',
    kept: true,
    wild: 'classic daemons with Type=forking and PIDFile= (nginx, haproxy, older vendor units)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/forkpid.service': unit('forking with a PID file', ['Type=forking', 'PIDFile=/run/forkpid.pid', `ExecStart=${D} --daemon --pidfile /run/forkpid.pid ${port}`]), ...wants('forkpid.service') },
      listens: [port],
    }),
  },
  {
    id: 'forking-without-pidfile',
    kept: true,
    wild: 'Type=forking units written without PIDFile= (systemd guesses the main PID)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/forkguess.service': unit('forking, main PID guessed', ['Type=forking', `ExecStart=${D} --daemon ${port}`]), ...wants('forkguess.service') },
      listens: [port],
    }),
  },
  {
    id: 'killmode-process-leftover',
    kept: true,
    // KillMode=process: stopping the unit kills only its main process; the listener it started stays in the cgroup.
    wild: 'units with KillMode=process (ssh.service, old wrappers that start a daemon in the background)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/wrapper.service': unit('wrapper that backgrounds the daemon', ['KillMode=process', `ExecStart=/bin/sh -c '${D} ${port} & exec sleep infinity'`]), ...wants('wrapper.service') },
      listens: [port],
    }),
  },
  {
    id: 'unit-helper-child',
    kept: true,
    // The main process forks a helper that holds the port and waits for it.
    wild: 'daemons whose listener is a worker child (master/worker designs, shell wrappers without exec)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/helperd.service': unit('listener is a child', [`ExecStart=${D} --child ${port}`, 'Restart=always']), ...wants('helperd.service') },
      listens: [port],
    }),
  },
  {
    id: 'supervisor-program',
    // Debian's supervisor package runs it from /etc/supervisor/conf.d.
    wild: 'supervisord-managed apps (Python/Django stacks, queue workers, dev API servers)',
    port: true,
    late: 2,
    recipe: ({ port }) => ({
      files: { '/etc/supervisor/conf.d/superapi.conf': `[program:superapi]\ncommand=${D} ${port}\nautostart=true\nautorestart=true\n` },
      listens: [port],
    }),
  },
  {
    id: 'inetd-serves-others',
    // Debian's openbsd-inetd serving the port beside two of its built-in services: stopping inetd.service frees the
    // port and ends them; the farm's desired state leaves stop_shared_holders at false, so the plan must say so.
    wild: "openbsd-inetd on old hosts (discard, echo, ident or an admin's tool behind inetd.conf), serving a control-plane port beside them",
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/inetd.conf': `# /etc/inetd.conf of the previous admins\ndiscard\t\tstream\ttcp\tnowait\troot\tinternal\necho\t\tstream\ttcp\tnowait\troot\tinternal\n${port}\tstream\ttcp\tnowait\tnobody\t/bin/cat cat\n`,
      },
      listens: [port],
    }),
    says: ({ port }) => [
      `stopping inetd.service to free ${port} also ends its other services: discard (9/tcp, /etc/inetd.conf:2), echo (7/tcp, /etc/inetd.conf:3)`,
      'comment out /etc/inetd.conf:4',
      'Or set stop_shared_holders: true to stop and disable inetd.service anyway',
    ],
  },
  {
    id: 'cron-reboot-system',
    wild: '@reboot lines in /etc/cron.d (admins starting a tool without writing a unit)',
    port: true,
    late: 3,
    recipe: ({ port }) => ({ files: { '/etc/cron.d/cronapi': `# started at boot by cron\n@reboot root ${D} ${port}\n` }, listens: [port] }),
  },
  {
    id: 'cron-reboot-user-crontab',
    wild: 'a user\'s own "crontab -e" with @reboot (users without root starting their service)',
    port: true,
    late: 3,
    recipe: ({ port }) => ({
      files: { '/var/spool/cron/crontabs/carol': { mode: 0o600, content: `# user crontab\n@reboot ${D} ${port}\n` } },
      setup: ['id carol >/dev/null 2>&1 || useradd -m carol', 'chown carol:crontab /var/spool/cron/crontabs/carol'],
      listens: [port],
    }),
  },
  {
    id: 'at-job-from-rc-local',
    // rc.local queues an at job (atd runs it at once): the listener is atd's child.
    wild: 'at jobs queued from boot scripts to start something detached ("echo cmd | at now")',
    port: true,
    late: 3,
    recipe: ({ port }) => ({ rcLocal: [`echo '${D} ${port}' | at now 2>/dev/null`], listens: [port] }),
  },
  {
    id: 'sysv-init-script',
    kept: true,
    // An /etc/init.d script with rc?.d links: systemd-sysv-generator makes a Type=forking unit with GuessMainPID=no.
    wild: 'vendor init scripts that never got a unit (old agents, appliances, in-house scripts from the sysvinit days)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/init.d/legacyd': {
          mode: 0o755,
          content: [
            '#!/bin/sh', '### BEGIN INIT INFO', '# Provides:          legacyd', '# Required-Start:    $remote_fs $syslog', '# Required-Stop:     $remote_fs $syslog',
            '# Default-Start:     2 3 4 5', '# Default-Stop:      0 1 6', '# Short-Description: legacy daemon', '### END INIT INFO',
            'case "$1" in',
            `  start) ${D} --daemon --pidfile /run/legacyd.pid ${port} ;;`,
            '  stop) [ -f /run/legacyd.pid ] && kill "$(cat /run/legacyd.pid)"; rm -f /run/legacyd.pid ;;',
            '  restart) "$0" stop; "$0" start ;;', '  status) [ -f /run/legacyd.pid ] && kill -0 "$(cat /run/legacyd.pid)" ;;', 'esac', 'exit 0', '',
          ].join('\n'),
        },
      },
      setup: ['update-rc.d legacyd defaults >/dev/null'],
      listens: [port],
    }),
  },
  {
    id: 'linger-user-with-bus',
    kept: true,
    // A lingering user's manager (user@UID.service) runs the service; dbus-user-session gives the user a bus.
    wild: 'rootless services: "loginctl enable-linger" plus systemctl --user (podman, syncthing, users\' own APIs)',
    port: true,
    recipe: ({ port }) => lingering('alice', port),
    conflicts: ['linger-user-without-bus'],
  },
  {
    id: 'linger-user-without-bus',
    kept: true,
    // Issue 27's second defect: the same without dbus-user-session (minimal servers): no user bus, only the manager's private socket.
    wild: 'minimal servers without dbus-user-session where a user lingers (debootstrap/cloud images)',
    port: true,
    recipe: ({ port }) => {
      const r = lingering('dave', port);
      return { ...r, setup: ['dpkg -r dbus-user-session >/dev/null', ...r.setup] };
    },
    conflicts: ['linger-user-with-bus'],
  },
  {
    id: 'login-session-from-rc-local',
    // su - from rc.local opens a PAM session (pam_systemd): the listener lives in session-N.scope.
    wild: 'boot scripts that "su - user -c \'cmd &\'" to run a daemon as a user',
    port: true,
    late: 3,
    recipe: ({ port }) => ({
      rcLocal: [`su - erin -c 'setsid ${D} ${port} >/dev/null 2>&1 < /dev/null &'`],
      setup: ['id erin >/dev/null 2>&1 || useradd -m -s /bin/sh erin'],
      listens: [port],
    }),
  },
  {
    id: 'former-node-kubelet',
    // Issue 46: a former kubespray node: its kubelet.service still enabled and holding its port, the static-pod
    // manifests, kubelet.conf and etcd's data left behind. kubelet is the node's container runtime side: the plan
    // stops nothing of it and points the operator to the former-node finding (kubespray's reset.yml).
    wild: 'servers that were Kubernetes nodes before (kubelet still enabled, /etc/kubernetes and /var/lib/etcd left behind)',
    port: true,
    conflicts: ['former-node-kubelet-reset', 'former-kubeadm-node-reset'],
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/kubelet.service': unit('kubelet: The Kubernetes Node Agent', [`ExecStart=${D} ${port}`, 'Restart=always', 'RestartSec=5']),
        ...wants('kubelet.service'),
        '/etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n',
        '/etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
        '/var/lib/etcd/member/snap/db': 'etcd data\n',
      },
      listens: [port],
    }),
  },
  {
    id: 'former-node-kubelet-reset',
    // The same former kubespray control-plane node, with its host etcd, reset: the farm's desired state gets
    // PreviousCluster with policy reset, which stops and disables kubelet and etcd, sets their unit files aside
    // and moves the node's directories aside; its promises (each directory absent, each node unit down) are
    // judged after apply and after the reboot.
    wild: 'a former kubespray node (kubelet and a host etcd enabled, kubeadm drop-in, manifests, pki, etcd data, a CNI config) that an admin asks to reset',
    port: true,
    conflicts: ['former-node-kubelet'],
    desired: ['  - type: PreviousCluster', '    policy: reset'],
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/kubelet.service': unit('kubelet: The Kubernetes Node Agent', [`ExecStart=${D} ${port}`, 'Restart=always', 'RestartSec=5']),
        '/etc/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--kubeconfig=/etc/kubernetes/kubelet.conf"\n',
        ...wants('kubelet.service'),
        '/etc/systemd/system/etcd.service': unit('etcd', [`ExecStart=${D} 12379`, 'Restart=always']),
        ...wants('etcd.service'),
        '/etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n',
        '/etc/kubernetes/kubelet.conf': 'apiVersion: v1\nkind: Config\n',
        '/etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
        '/etc/kubernetes/pki/ca.crt': '-----BEGIN CERTIFICATE-----\n',
        '/var/lib/kubelet/config.yaml': 'kind: KubeletConfiguration\n',
        '/var/lib/etcd/member/snap/db': 'etcd data\n',
        '/etc/cni/net.d/10-calico.conflist': '{"name":"k8s-pod-network"}\n',
      },
      listens: [port],
    }),
  },
  {
    id: 'former-k3s-node-reset',
    // k3s's leftovers as its install script leaves them (k3s.service in /etc/systemd/system with its .env file,
    // /etc/rancher/k3s/k3s.yaml, /var/lib/rancher/k3s), the server holding its port, reset by PreviousCluster.
    wild: 'a server that ran k3s (get.k3s.io) before, its k3s.service still enabled',
    port: true,
    desired: ['  - type: PreviousCluster', '    policy: reset'],
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/k3s.service': unit('Lightweight Kubernetes', ['Type=simple', 'EnvironmentFile=-/etc/systemd/system/k3s.service.env', `ExecStart=${D} ${port}`, 'Restart=always', 'RestartSec=5s']),
        '/etc/systemd/system/k3s.service.env': '',
        ...wants('k3s.service'),
        '/etc/rancher/k3s/k3s.yaml': 'apiVersion: v1\nkind: Config\n',
        '/var/lib/rancher/k3s/server/token': 'K10token\n',
        '/var/lib/rancher/k3s/server/db/state.db': 'sqlite\n',
      },
      listens: [port],
    }),
  },
  {
    id: 'former-kubeadm-node-reset',
    // A former kubeadm node installed from the Kubernetes packages: kubelet.service and kubeadm's drop-in are the
    // package's (/usr/lib/systemd/system, never moved), enabled from /etc; etcd ran as a static pod (its manifest in
    // /etc/kubernetes/manifests, its data in /var/lib/etcd). The reset stops and disables kubelet and moves the
    // directories aside; the package's unit stays, disabled.
    wild: 'a node set up with kubeadm init from the Kubernetes apt packages, etcd as a static pod',
    port: true,
    conflicts: ['former-node-kubelet', 'former-node-kubelet-reset'],
    desired: ['  - type: PreviousCluster', '    policy: reset'],
    recipe: ({ port }) => ({
      files: {
        '/usr/lib/systemd/system/kubelet.service': unit('kubelet: The Kubernetes Node Agent', [`ExecStart=${D} ${port}`, 'Restart=always', 'RestartSec=10']),
        '/usr/lib/systemd/system/kubelet.service.d/10-kubeadm.conf': '[Service]\nEnvironment="KUBELET_KUBECONFIG_ARGS=--bootstrap-kubeconfig=/etc/kubernetes/bootstrap-kubelet.conf --kubeconfig=/etc/kubernetes/kubelet.conf"\n',
        ...wants('kubelet.service', '/usr/lib/systemd/system/kubelet.service'),
        '/etc/kubernetes/manifests/etcd.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: etcd\n  namespace: kube-system\n',
        '/etc/kubernetes/manifests/kube-apiserver.yaml': 'apiVersion: v1\nkind: Pod\nmetadata:\n  name: kube-apiserver\n  namespace: kube-system\n',
        '/etc/kubernetes/admin.conf': 'apiVersion: v1\nkind: Config\n',
        '/etc/kubernetes/pki/etcd/ca.crt': '-----BEGIN CERTIFICATE-----\n',
        '/var/lib/etcd/member/snap/db': 'etcd data\n',
        '/var/lib/kubelet/config.yaml': 'kind: KubeletConfiguration\n',
      },
      listens: [port],
    }),
  },
];

