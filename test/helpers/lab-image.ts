// A lab-like unbooted image for end-to-end runs of the bundle with --root:
// the lab's faults, with bytes that a careless rewrite would damage
// (a Latin-1 label, CRLF, a NUL in a comment, no final newline) and files
// owned by someone other than root.
import { chmodSync, chownSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import path from 'node:path';

export const FSTAB = Buffer.concat([
  Buffer.from('# /etc/fstab: static file system information.\r\n'),
  Buffer.from('UUID=1111-2222 / ext4 errors=remount-ro 0 1\n'),
  Buffer.from('LABEL=d'),
  Buffer.from([0xe9]),
  Buffer.from('p'),
  Buffer.from([0xf4]),
  Buffer.from('t /srv ext4 defaults 0 2\n'),
  Buffer.from('# old disk \0 was here\n'),
  Buffer.from('/swapfile none swap sw 0 0'),
]);

export const BASELINE = Buffer.concat([
  Buffer.from('# Hardening baseline, r'),
  Buffer.from([0xe9]),
  Buffer.from('vision 3\n'),
  Buffer.from('net.ipv4.ip_forward = 0\r\n'),
  Buffer.from('vm.swappiness = 10\n'),
]);

/** Debian's /etc/sysctl.conf, edited by hand in Latin-1, read at boot through 99-sysctl.conf. */
export const SYSCTL_CONF = Buffer.concat([
  Buffer.from('# /etc/sysctl.conf - r'),
  Buffer.from([0xe9]),
  Buffer.from('glages locaux\n'),
  Buffer.from('net.ipv4.ip_forward=0\n'),
  Buffer.from('kernel.printk = 3 4 1 3'),
]);

export const DESIRED = `reports_dir: /root/ks/preflight
facts:
  source: native
resources:
  - type: SwapOff
    mask_swap_target: true
    remove_swap_files: false
  - type: ModulesLoad
    file: /etc/modules-load.d/k8s.conf
    modules: [overlay, br_netfilter]
  - type: SysctlFile
    file: /etc/sysctl.d/k8s.conf
    settings:
      net.ipv4.ip_forward: 1
      net.bridge.bridge-nf-call-iptables: 1
      net.bridge.bridge-nf-call-ip6tables: 1
    conflict_policy: resolve
  - type: PortFree
    ports: [2379, 2380, 6443, 10250, 10257, 10259]
    disable_units: [metrics-agent.service]
`;

const AGENT = `[Unit]
Description=Metrics agent
[Service]
ExecStart=/usr/local/bin/metrics-agent --listen :10250
Restart=always
[Install]
WantedBy=multi-user.target
`;

export function buildLabImage(root: string): string {
  const put = (rel: string, data: string | Buffer, mode = 0o644) => {
    const abs = path.join(root, rel);
    mkdirSync(path.dirname(abs), { recursive: true });
    writeFileSync(abs, data);
    chmodSync(abs, mode);
  };
  for (const d of ['run', 'etc/modules-load.d', 'root']) mkdirSync(path.join(root, d), { recursive: true });
  put('etc/fstab', FSTAB, 0o640);
  chownSync(path.join(root, 'etc/fstab'), 1234, 4321);
  put('etc/sysctl.d/security-baseline.conf', BASELINE, 0o600);
  put('etc/sysctl.conf', SYSCTL_CONF);
  symlinkSync('../sysctl.conf', path.join(root, 'etc/sysctl.d/99-sysctl.conf'));
  put('etc/modprobe.d/blacklist-bridge.conf', 'blacklist br_netfilter\n');
  put('etc/systemd/system/metrics-agent.service', AGENT);
  mkdirSync(path.join(root, 'etc/systemd/system/multi-user.target.wants'), { recursive: true });
  symlinkSync('/etc/systemd/system/metrics-agent.service', path.join(root, 'etc/systemd/system/multi-user.target.wants/metrics-agent.service'));
  put('swapfile', Buffer.alloc(4096), 0o600);
  // Debian's nodejs, as a stand-in: the first-boot unit the bake installs runs the bundle with it.
  put('usr/bin/node', "#!/bin/sh\n# stand-in for /usr/bin/node from Debian's nodejs\n", 0o755);
  const desired = path.join(root, 'root/desired-state.yaml');
  writeFileSync(desired, DESIRED);
  return desired;
}

/** What a run may add besides its changes: its own reports and the lock. */
export const toolOwned = (rel: string) => rel === 'root/ks' || rel.startsWith('root/ks/') || rel === 'run/k8s-host-reconcile.lock';
