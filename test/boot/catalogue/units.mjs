// Where a unit lives and what starts it. Each entry is what an admin writes
// or a package ships, with a listener standing in for the daemon
// (/usr/local/sbin/tinyd, test/boot/lib/tinyd.py).
const D = '/usr/local/sbin/tinyd';
const service = (desc, exec, extra = {}) =>
  [
    '[Unit]', `Description=${desc}`, ...(extra.unit ?? []), '',
    '[Service]', ...(extra.service ?? []), `ExecStart=${exec}`, ...(extra.restart === false ? [] : ['Restart=always']), '',
    '[Install]', `WantedBy=${extra.wantedBy ?? 'multi-user.target'}`, ...(extra.install ?? []), '',
  ].join('\n');
const wants = (target, unit, from = `/etc/systemd/system/${unit}`) => ({ [`/etc/systemd/system/${target}.wants/${unit}`]: { link: from } });

export default [
  {
    id: 'etc-unit-enabled',
    kept: true,
    // An admin's own service: the usual place, /etc/systemd/system, enabled for multi-user.target.
    wild: 'hand-written units for an in-house API or a tarball etcd (etcd.io install guides put etcd.service in /etc/systemd/system)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/inhouse-api.service': service('in-house API', `${D} ${port}`), ...wants('multi-user.target', 'inhouse-api.service') },
      listens: [port],
    }),
  },
  {
    id: 'etc-unit-wanted-by-enabled-target',
    kept: true,
    // Issue 27's first defect: the unit's file is in /etc, and an enabled target Wants= it; disabling is not enough, and
    // systemctl mask refuses ("already exists").
    wild: 'an admin groups services under a site target (app.target with Wants= lines), common in hand-built stacks',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/site-api.service': service('site API', `${D} ${port}`),
        '/etc/systemd/system/site.target': '[Unit]\nDescription=site services\nWants=site-api.service\n\n[Install]\nWantedBy=multi-user.target\n',
        ...wants('multi-user.target', 'site.target'),
      },
      listens: [port],
    }),
  },
  {
    id: 'lib-vendor-unit-enabled',
    kept: true,
    // A package's unit in /lib/systemd/system, enabled by its postinst (deb-systemd-helper) with a link in /etc.
    wild: 'any Debian package with a daemon (the layout etcd-server, prometheus, grafana use)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/lib/systemd/system/vendor-daemon.service': service('vendor daemon', `${D} ${port}`), ...wants('multi-user.target', 'vendor-daemon.service', '/lib/systemd/system/vendor-daemon.service') },
      listens: [port],
    }),
  },
  {
    id: 'usr-lib-unit-enabled',
    kept: true,
    // A unit under /usr/lib/systemd/system (merged-/usr path), enabled through a link naming /usr/lib.
    wild: 'packages built for merged /usr (Debian 12 and later), and vendor repos (e.g. a third-party apt repo\'s agent)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/usr/lib/systemd/system/usr-agent.service': service('third-party agent', `${D} ${port}`), ...wants('multi-user.target', 'usr-agent.service', '/usr/lib/systemd/system/usr-agent.service') },
      listens: [port],
    }),
  },
  {
    id: 'linked-unit-from-opt',
    kept: true,
    // systemctl link: the unit file stays with the application under /opt, /etc/systemd/system has a symlink to it.
    wild: 'vendor tarballs installed under /opt that run "systemctl link /opt/app/app.service" (e.g. some monitoring agents)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/opt/optapp/optapp.service': service('app under /opt', `${D} ${port}`),
        '/etc/systemd/system/optapp.service': { link: '/opt/optapp/optapp.service' },
        ...wants('multi-user.target', 'optapp.service', '/opt/optapp/optapp.service'),
      },
      listens: [port],
    }),
  },
  {
    id: 'alias-unit',
    kept: true,
    // Enabled under its Alias= name: the .wants link and the alias link name another name than the file.
    wild: 'packages that keep an old name as Alias= (e.g. Debian\'s ssh.service Alias=sshd.service)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/lib/systemd/system/newname.service': service('renamed daemon', `${D} ${port}`, { install: ['Alias=oldname.service'] }),
        '/etc/systemd/system/oldname.service': { link: '/lib/systemd/system/newname.service' },
        ...wants('multi-user.target', 'newname.service', '/lib/systemd/system/newname.service'),
      },
      listens: [port],
    }),
  },
  {
    id: 'template-instance',
    kept: true,
    // A template enabled as an instance: the port is the instance name.
    wild: 'per-port or per-tenant templates (postgresql@, openvpn@, an admin\'s api@PORT.service)',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/tapi@.service': service('API on port %i', `${D} %i`), ...wants('multi-user.target', `tapi@${port}.service`, '/etc/systemd/system/tapi@.service') },
      listens: [port],
    }),
  },
  {
    id: 'dropin-replaces-execstart',
    kept: true,
    // A vendor unit that does nothing on a port, and an /etc drop-in that empties ExecStart= and sets another.
    wild: 'systemctl edit overrides (docker.service -H tcp://0.0.0.0:PORT drop-ins are the classic)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/lib/systemd/system/dockerish.service': service('container engine', '/bin/sleep infinity'),
        '/etc/systemd/system/dockerish.service.d/override.conf': `[Service]\nExecStart=\nExecStart=${D} ${port}\n`,
        ...wants('multi-user.target', 'dockerish.service', '/lib/systemd/system/dockerish.service'),
      },
      listens: [port],
    }),
  },
  {
    id: 'wantedby-default-target',
    kept: true,
    // WantedBy=default.target instead of multi-user.target (graphical.target here, the container's default).
    wild: 'units copied from desktop or user-unit guides that say WantedBy=default.target',
    port: true,
    recipe: ({ port }) => ({
      files: { '/etc/systemd/system/deftgt.service': service('wanted by default.target', `${D} ${port}`, { wantedBy: 'default.target' }), ...wants('graphical.target', 'deftgt.service') },
      listens: [port],
    }),
  },
  {
    id: 'requires-from-enabled-unit',
    kept: true,
    // Not enabled itself: another enabled unit Requires= it.
    wild: 'a frontend unit with Requires=backend.service (the backend never enabled on its own)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/backend.service': service('backend', `${D} ${port}`),
        '/etc/systemd/system/frontend.service': service('frontend', '/bin/sleep infinity', { unit: ['Requires=backend.service', 'After=backend.service'] }),
        ...wants('multi-user.target', 'frontend.service'),
      },
      listens: [port],
    }),
  },
  {
    id: 'upholds-from-enabled-unit',
    kept: true,
    // Upholds= (systemd 249+): while the upholder is active, the upheld unit is restarted whenever it stops.
    wild: 'newer units that keep a companion running with Upholds= instead of Restart=',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/companion.service': service('companion', `${D} ${port}`, { restart: false }),
        '/etc/systemd/system/keeper.service': service('keeper', '/bin/sleep infinity', { unit: ['Upholds=companion.service'] }),
        ...wants('multi-user.target', 'keeper.service'),
      },
      listens: [port],
    }),
  },
  {
    id: 'socket-activated',
    kept: true,
    // The port is held by PID 1 for a .socket unit; the service runs only on a connection.
    wild: 'socket-activated daemons (cups, docker.socket, an admin\'s inetd-style service)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/sockd.socket': `[Unit]\nDescription=socket for sockd\n\n[Socket]\nListenStream=${port}\n\n[Install]\nWantedBy=sockets.target\n`,
        '/etc/systemd/system/sockd.service': '[Unit]\nDescription=sockd\n\n[Service]\nExecStart=/bin/sleep infinity\n',
        ...wants('sockets.target', 'sockd.socket'),
      },
      listens: [port],
    }),
  },
  {
    id: 'timer-starts-service',
    kept: true,
    // A .timer starts the service shortly after boot.
    wild: 'delayed-start timers (OnBootSec=) for services that should wait for the network',
    port: true,
    late: 3,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/delayed.service': '[Unit]\nDescription=started by a timer\n\n[Service]\nExecStart=' + `${D} ${port}` + '\n',
        '/etc/systemd/system/delayed.timer': '[Unit]\nDescription=start delayed.service after boot\n\n[Timer]\nOnBootSec=1s\n\n[Install]\nWantedBy=timers.target\n',
        ...wants('timers.target', 'delayed.timer'),
      },
      listens: [port],
    }),
  },
  {
    id: 'path-unit-starts-service',
    kept: true,
    // A .path unit whose condition always holds: it starts the service again the moment it stops (issue 26).
    wild: 'path units watching a config or spool directory (PathExists=, DirectoryNotEmpty=)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system/watched.service': '[Unit]\nDescription=started by a path unit\n\n[Service]\nExecStart=' + `${D} ${port}` + '\n',
        '/etc/systemd/system/watched.path': '[Unit]\nDescription=start watched.service when its config exists\n\n[Path]\nPathExists=/etc/hostname\n\n[Install]\nWantedBy=paths.target\n',
        ...wants('paths.target', 'watched.path'),
      },
      listens: [port],
    }),
  },
  {
    id: 'generator-made-unit',
    kept: true,
    // A generator writes the unit and its .wants link into /run/systemd/generator at every boot.
    wild: 'generators shipped by packages or admins (systemd-fstab-generator style; e.g. an admin\'s generator for per-host services)',
    port: true,
    recipe: ({ port }) => ({
      files: {
        '/etc/systemd/system-generators/farm-gen': {
          mode: 0o755,
          content: [
            '#!/bin/sh', '# writes gen-api.service into the normal generator directory', 'out="$1"',
            `printf '[Unit]\\nDescription=generated API\\n\\n[Service]\\nExecStart=${D} ${port}\\n' > "$out/gen-api.service"`,
            'mkdir -p "$out/multi-user.target.wants"', 'ln -sf ../gen-api.service "$out/multi-user.target.wants/gen-api.service"', '',
          ].join('\n'),
        },
      },
      listens: [port],
    }),
  },
  {
    id: 'transient-systemd-run-from-rc-local',
    // rc.local starts the daemon with systemd-run: a transient unit in /run/systemd/transient, made again at every boot.
    wild: 'rc.local lines like "systemd-run --unit=app /opt/app/bin/app" on hosts migrated from sysvinit',
    port: true,
    late: 2,
    recipe: ({ port }) => ({
      rcLocal: [`systemd-run --unit=transient-api ${D} ${port}`],
      listens: [port],
    }),
  },
  {
    id: 'transient-systemd-run-unnamed',
    // systemd-run without --unit: a random run-*.service name, so no line can be matched to the holder by name.
    wild: 'quick "systemd-run /opt/tool/bin/tool" lines pasted from chat into rc.local to get a daemon logged to the journal',
    port: true,
    late: 2,
    recipe: ({ port }) => ({
      rcLocal: [`systemd-run -p Restart=always ${D} ${port}`],
      listens: [port],
    }),
  },
  {
    id: 'transient-systemd-run-cron-reboot',
    // cron's @reboot runs systemd-run, so the daemon gets a unit (and the journal) without a unit file.
    wild: '@reboot root systemd-run --unit=... lines in /etc/cron.d, written by admins who want journald logging without a unit file',
    port: true,
    late: 3,
    recipe: ({ port }) => ({
      files: { '/etc/cron.d/cronrun': `# started at boot by cron, logged by journald\n@reboot root systemd-run --unit=cron-api ${D} ${port}\n` },
      listens: [port],
    }),
  },
  {
    id: 'private-network-listener',
    kept: true,
    // Nothing of the host's: the port must stay free and promised.
    holds: 'nothing (the host port stays free)',
    // Issue 48: listens on 6443 inside a network namespace of its own (PrivateNetwork=yes); the host's port stays free.
    wild: 'sandboxed test or mock API units (PrivateNetwork=yes) that bind the real API port inside their own namespace',
    recipe: () => ({
      files: { '/etc/systemd/system/api-sandbox.service': service('API mock in its own network namespace', `${D} 6443`, { service: ['PrivateNetwork=yes'] }), ...wants('multi-user.target', 'api-sandbox.service') },
    }),
  },
  {
    id: 'udp-relay-datagram-socket',
    kept: true,
    // Nothing of the host's: the port must stay free and promised.
    holds: 'nothing (the host port stays free)',
    // Issue 48: a .socket with ListenDatagram=6443 starting a relay whose command names 6443: UDP, not the host's TCP port.
    wild: 'UDP relays and syslog or metrics forwarders socket-activated on a datagram port that happens to be a control-plane number',
    recipe: () => ({
      files: {
        '/etc/systemd/system/udp-relay.socket': '[Unit]\nDescription=UDP relay socket\n\n[Socket]\nListenDatagram=6443\n\n[Install]\nWantedBy=sockets.target\n',
        '/etc/systemd/system/udp-relay.service': '[Unit]\nDescription=UDP relay\n\n[Service]\nExecStart=/usr/bin/env RELAY_TO=192.0.2.10:6443 /bin/sleep infinity\n',
        ...wants('sockets.target', 'udp-relay.socket'),
      },
    }),
  },
];
