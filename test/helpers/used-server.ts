// A used Debian 12 server as an unbooted root, for the bench (scripts/bench.mjs
// bundles this file) and the test that counts work per file (test/reconcile/scale-per-file.test.ts): merged /usr, a unit tree
// of a few hundred units (services with ExecStart= programs, sockets, timers,
// targets, drop-ins, enablement links), and N sysctl.d files that repeat the
// keys real fleets repeat: every security baseline sets vm.max_map_count,
// kernel.pid_max and per-interface rp_filter, and some set the three keys the
// default desired state wants (some to 0, so SysctlFile has conflicts to judge).
// Deterministic: the same N gives the same bytes.
import { cpSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const IFACES: readonly string[] = ['eth0', 'eth1', 'ens3', 'ens4', 'bond0', 'br0', 'vlan100', 'wg0'];
const SYSCTL_DIRS = ['etc/sysctl.d', 'usr/lib/sysctl.d', 'run/sysctl.d'];
const WANTED = ['net.ipv4.ip_forward', 'net.bridge.bridge-nf-call-iptables', 'net.bridge.bridge-nf-call-ip6tables'];

/** systemd's own 50-default.conf (v252), globs and '-' prefixes included. */
const SYSTEMD_DEFAULT = `# This file is part of systemd.
kernel.sysrq = 0x01b6
kernel.core_uses_pid = 1
net.ipv4.conf.default.rp_filter = 2
net.ipv4.conf.*.rp_filter = 2
-net.ipv4.conf.all.rp_filter
net.ipv4.conf.default.accept_source_route = 0
net.ipv4.conf.*.accept_source_route = 0
-net.ipv4.conf.all.accept_source_route
net.ipv4.conf.default.promote_secondaries = 1
net.ipv4.conf.*.promote_secondaries = 1
-net.ipv4.conf.all.promote_secondaries
-net.ipv4.ping_group_range = 0 2147483647
-net.core.default_qdisc = fq_codel
fs.protected_hardlinks = 1
fs.protected_symlinks = 1
fs.protected_regular = 1
fs.protected_fifos = 1
`;

/** The text of the i-th sysctl.d file: the keys every baseline repeats, per-interface keys, now and then the wanted ones. */
export function sysctlFileText(i: number): string {
  const a = IFACES[i % IFACES.length];
  const b = IFACES[(i * 3 + 1) % IFACES.length];
  const lines = [
    `# security baseline ${i} (fleet role ${i % 17})`,
    'vm.max_map_count = 262144',
    `kernel.pid_max = ${4194304 - (i % 3)}`,
    'net.ipv4.conf.all.rp_filter = 1',
    'net.ipv4.conf.default.rp_filter = 1',
    `net.ipv4.conf.${a}.rp_filter = ${1 + (i % 2)}`,
    `net.ipv4.conf.${b}.log_martians = 1`,
    `net.ipv6.conf.${a}.accept_ra = 0`,
    `fs.inotify.max_user_watches = ${524288 + (i % 5)}`,
    '',
    `vm.swappiness=${i % 60}`,
  ];
  // One file in ten sets the wanted keys, every other such file against the desired value.
  if (i % 10 === 3) for (const k of WANTED) lines.push(`${k} = ${i % 20 === 3 ? 0 : 1}`);
  return `${lines.join('\n')}\n`;
}

type Put = (rel: string, data: string | Buffer, mode?: number) => void;
type Link = (to: string, rel: string) => void;

function unitTree(put: Put, link: Link): void {
  const sys = 'usr/lib/systemd/system';
  const etc = 'etc/systemd/system';
  const targets = [
    'multi-user.target',
    'sysinit.target',
    'basic.target',
    'network-online.target',
    'timers.target',
    'sockets.target',
    'getty.target',
    'local-fs.target',
    'network.target',
    'graphical.target',
  ];
  for (const t of targets) put(`${sys}/${t}`, `[Unit]\nDescription=${t}\nDocumentation=man:systemd.special(7)\n`);
  for (let i = 0; i < 60; i++) put(`${sys}/stock-${i}.target`, `[Unit]\nDescription=Stock target ${i}\nRequires=basic.target\nAfter=basic.target\n`);
  for (let i = 0; i < 200; i++) {
    const name = `svc${String(i).padStart(3, '0')}`;
    put(`usr/sbin/${name}d`, Buffer.concat([Buffer.from([0x7f, 0x45, 0x4c, 0x46, 2, 1, 1, 0]), Buffer.alloc(56)]), 0o755);
    const pre = i % 7 === 0 ? `ExecStartPre=/bin/mkdir -p /run/${name}\n` : '';
    const deps = i % 5 === 0 ? 'Wants=network-online.target\nAfter=network-online.target\n' : 'After=network.target\n';
    put(
      `${sys}/${name}.service`,
      `[Unit]\nDescription=Daemon ${i}\nDocumentation=man:${name}d(8)\n${deps}\n[Service]\nType=${i % 3 ? 'simple' : 'forking'}\nEnvironmentFile=-/etc/default/${name}\n${pre}ExecStart=/usr/sbin/${name}d --config /etc/${name}/${name}.conf\nExecReload=/bin/kill -HUP $MAINPID\nRestart=on-failure\n\n[Install]\nWantedBy=multi-user.target\n`,
    );
    if (i % 2 === 0) link(`/usr/lib/systemd/system/${name}.service`, `${etc}/multi-user.target.wants/${name}.service`);
    if (i % 25 === 0) put(`${etc}/${name}.service.d/override.conf`, `[Service]\nLimitNOFILE=65536\nEnvironment=OPTS=--verbose\n`);
  }
  for (let i = 0; i < 30; i++) {
    put(`${sys}/sock${i}.socket`, `[Unit]\nDescription=Socket ${i}\n\n[Socket]\nListenStream=${20000 + i}\n\n[Install]\nWantedBy=sockets.target\n`);
    put(`${sys}/sock${i}.service`, `[Unit]\nDescription=Socket service ${i}\n\n[Service]\nExecStart=/usr/sbin/svc${String(i).padStart(3, '0')}d --inetd\n`);
    if (i % 3 === 0) link(`/usr/lib/systemd/system/sock${i}.socket`, `${etc}/sockets.target.wants/sock${i}.socket`);
  }
  for (let i = 0; i < 30; i++) {
    put(`${sys}/job${i}.timer`, `[Unit]\nDescription=Timer ${i}\n\n[Timer]\nOnCalendar=daily\nPersistent=true\n\n[Install]\nWantedBy=timers.target\n`);
    put(
      `${sys}/job${i}.service`,
      `[Unit]\nDescription=Job ${i}\n\n[Service]\nType=oneshot\nExecStart=/usr/sbin/svc${String(i + 30).padStart(3, '0')}d --once\n`,
    );
    link(`/usr/lib/systemd/system/job${i}.timer`, `${etc}/timers.target.wants/job${i}.timer`);
  }
  for (let i = 0; i < 6; i++) put(`${sys}/getty-extra${i}.path`, `[Unit]\nDescription=Path ${i}\n\n[Path]\nPathExists=/run/flag${i}\n`);
  link('/dev/null', `${etc}/ctrl-alt-del.target`);
  // An admin's own service, one with a shell line.
  put(`${etc}/backup.service`, `[Unit]\nDescription=Nightly backup\n\n[Service]\nType=oneshot\nExecStart=/bin/sh -c 'tar -czf /var/backups/etc.tgz /etc'\n`);
}

const KUBESPRAY_FIXTURE = path.resolve(path.dirname(new URL(import.meta.url).pathname), '../fixtures/kubespray-basic');

/**
 * Writes the used server under root with n sysctl.d files (spread over the three
 * sysctl.d directories, a few names present in two of them) and returns root.
 * With the kubespray checkout and inventory the default desired state names
 * (the repository's small fixture), the audit and kubespray's own sysctl file
 * are judged against the same tree.
 */
export function usedServerTree(
  root: string,
  n: number,
  { kubespray = true, kubesprayFixture = KUBESPRAY_FIXTURE }: { kubespray?: boolean; kubesprayFixture?: string } = {},
): string {
  const put: Put = (rel, data, mode = 0o644) => {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, data, { mode });
  };
  const link: Link = (to, rel) => {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    symlinkSync(to, abs);
  };
  for (const d of ['usr/bin', 'usr/sbin', 'usr/lib', 'usr/lib64', 'run', 'root', 'proc', 'sys', 'tmp', 'var/lib', 'etc/default'])
    mkdirSync(path.join(root, d), { recursive: true });
  for (const [l, t] of [
    ['bin', 'usr/bin'],
    ['sbin', 'usr/sbin'],
    ['lib', 'usr/lib'],
    ['lib64', 'usr/lib64'],
  ] as const)
    symlinkSync(t, path.join(root, l));
  put(
    'etc/os-release',
    'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nNAME="Debian GNU/Linux"\nVERSION_ID="12"\nVERSION="12 (bookworm)"\nVERSION_CODENAME=bookworm\nID=debian\n',
  );
  put('etc/debian_version', '12.8\n');
  put('etc/hostname', 'node1\n');
  put('etc/fstab', '# /etc/fstab\nUUID=1111-2222 / ext4 errors=remount-ro 0 1\nUUID=3333-4444 /boot ext4 defaults 0 2\n/swapfile none swap sw 0 0\n');
  put('swapfile', Buffer.alloc(4096), 0o600);
  put('etc/sysctl.conf', '# /etc/sysctl.conf\n#net.ipv4.ip_forward=1\nvm.swappiness = 10\n');
  link('../sysctl.conf', 'etc/sysctl.d/99-sysctl.conf');
  // A hardening file that sorts after the tool's own k8s.conf and turns forwarding off again.
  put('etc/sysctl.d/zz-hardening.conf', '# CIS 3.1.1\nnet.ipv4.ip_forward = 0\nnet.ipv4.conf.all.send_redirects = 0\n');
  put('usr/lib/sysctl.d/50-default.conf', SYSTEMD_DEFAULT);
  put('usr/lib/sysctl.d/50-pid-max.conf', 'kernel.pid_max = 4194304\n');
  put('etc/modules', '# /etc/modules\nloop\n');
  put('etc/modules-load.d/bonding.conf', 'bonding\n8021q\n');
  put('etc/modprobe.d/blacklist.conf', 'blacklist pcspkr\nblacklist floppy\n');
  put('etc/default/grub', 'GRUB_DEFAULT=0\nGRUB_TIMEOUT=5\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\nGRUB_CMDLINE_LINUX=""\n');
  put('etc/crontab', 'SHELL=/bin/sh\n17 * * * * root cd / && run-parts --report /etc/cron.hourly\n');
  put('etc/network/interfaces', 'auto lo\niface lo inet loopback\n\nauto eth0\niface eth0 inet dhcp\n');
  unitTree(put, link);
  if (kubespray) {
    cpSync(kubesprayFixture, path.join(root, 'opt/ks/kubespray'), { recursive: true });
    put(
      'root/ks/inventory/lab/inventory.ini',
      '[kube_control_plane]\nnode1\n\n[etcd]\nnode1\n\n[kube_node]\nnode1\n\n[k8s_cluster:children]\nkube_control_plane\nkube_node\n',
    );
  }
  for (let i = 0; i < n; i++) {
    const name = `${String(i).padStart(5, '0')}-baseline.conf`;
    put(path.join(SYSCTL_DIRS[i % SYSCTL_DIRS.length]!, name), sysctlFileText(i));
    // Now and then a vendor file overridden by an admin's file of the same name (first directory wins).
    if (i % 97 === 5) put(path.join('usr/lib/sysctl.d', name.replace('baseline', 'vendor')), sysctlFileText(i + 1));
    if (i % 97 === 5) put(path.join('etc/sysctl.d', name.replace('baseline', 'vendor')), sysctlFileText(i + 2));
  }
  return root;
}
