// What breaks at the first pod though the install succeeds, checked before
// it (docs/acceptance.md, src/acceptance/): hosts whose plan must name a
// check of ours (`finding.named`) and hosts whose plan must not mention it
// (`finding.absent`). The farm's desired state has no kubespray section, so a
// failing check is in the plan's "kubeadm preflight checks not judged here"
// line as `NAME (what fails)` (who fixes it needs a checkout); the booted
// container is the live host its facts are read from (links through /run,
// systemctl). They hold no port and set no sysctl, so they keep every promise.
const RESOLV = ['resolv-conf-local-resolver', 'resolv-conf-resolved-stub', 'resolv-conf-upstream'];
const others = (id) => RESOLV.filter((x) => x !== id);
const STATUS_APPEND = (stanza) => `printf '\\n${stanza.replace(/\n/g, '\\n')}' >> /var/lib/dpkg/status`;
const CONFIG = (systemd) =>
  [
    'version = 2',
    '',
    '[plugins]',
    '  [plugins."io.containerd.grpc.v1.cri"]',
    '    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]',
    '      runtime_type = "io.containerd.runc.v2"',
    '      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]',
    '        BinaryName = ""',
    `        SystemdCgroup = ${systemd}`,
    '',
  ].join('\n');

// Debian's stock /etc/nftables.conf (nftables 1.0.6): three base chains, no policy (accept).
const NFTABLES_STOCK =
  '#!/usr/sbin/nft -f\n\nflush ruleset\n\ntable inet filter {\n\tchain input {\n\t\ttype filter hook input priority filter;\n\t}\n\tchain forward {\n\t\ttype filter hook forward priority filter;\n\t}\n\tchain output {\n\t\ttype filter hook output priority filter;\n\t}\n}\n';
const NFTABLES_ROUTER = NFTABLES_STOCK.replace(
  '\t\ttype filter hook forward priority filter;\n',
  '\t\ttype filter hook forward priority filter; policy drop;\n\t\tct state established,related accept\n',
);

const NFTABLES_SSH_ONLY = NFTABLES_STOCK.replace(
  '\t\ttype filter hook input priority filter;\n',
  '\t\ttype filter hook input priority filter; policy drop;\n\t\tct state established,related accept\n\t\tiif "lo" accept\n\t\ttcp dport 22 accept\n',
);

export default [
  {
    id: 'resolv-conf-local-resolver',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'a local caching resolver (dnsmasq, unbound) at 127.0.0.1 as the only nameserver, set by an admin or by resolvconf',
    conflicts: others('resolv-conf-local-resolver'),
    finding: { check: 'ResolvConfLoop', named: true },
    recipe: () => ({ files: { '/etc/resolv.conf': '# dnsmasq on this host\nnameserver 127.0.0.1\noptions edns0\n' }, listens: [] }),
  },
  {
    id: 'resolv-conf-resolved-stub',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'Debian with systemd-resolved: /etc/resolv.conf a link to /run/systemd/resolve/stub-resolv.conf (nameserver 127.0.0.53), written at boot',
    conflicts: others('resolv-conf-resolved-stub'),
    finding: { check: 'ResolvConfLoop', named: true },
    recipe: () => ({
      files: {
        '/etc/resolv.conf': { link: '../run/systemd/resolve/stub-resolv.conf' },
        // systemd-resolved is not in the farm's root: tmpfiles writes its stub at boot, where resolved would.
        '/etc/tmpfiles.d/stub-resolv.conf':
          'd /run/systemd/resolve 0755 root root -\nf /run/systemd/resolve/stub-resolv.conf 0644 root root - nameserver 127.0.0.53\n',
      },
      listens: [],
    }),
  },
  {
    id: 'resolv-conf-upstream',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: "a cloud image's DHCP-written /etc/resolv.conf with the provider's resolver (the stock case: no line)",
    conflicts: others('resolv-conf-upstream'),
    finding: { check: 'ResolvConfLoop', named: false },
    recipe: () => ({ files: { '/etc/resolv.conf': 'domain c.internal\nsearch c.internal.\nnameserver 10.0.2.3\n' }, listens: [] }),
  },
  {
    id: 'debian-runc-package',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: "Debian's runc package left by docker.io or podman from an earlier container setup",
    finding: { check: 'ContainerRuntimeCollision', named: true },
    recipe: () => ({
      files: {},
      // The stanza dpkg keeps for bookworm's runc (its files are not needed: the check reads dpkg's database).
      setup: [
        STATUS_APPEND(
          'Package: runc\nStatus: install ok installed\nPriority: optional\nSection: admin\nArchitecture: amd64\nVersion: 1.1.5+ds1-1+deb12u1\nDescription: Open Container Project - runtime\n',
        ),
      ],
      listens: [],
    }),
  },
  {
    id: 'containerd-config-cgroupfs',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'an /etc/containerd/config.toml from `containerd config default` (SystemdCgroup = false), left by an earlier hand-made containerd',
    conflicts: ['containerd-config-systemd'],
    finding: { check: 'ContainerRuntimeCollision', named: true },
    recipe: () => ({ files: { '/etc/containerd/config.toml': CONFIG(false) }, listens: [] }),
  },
  {
    id: 'containerd-config-systemd',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'an /etc/containerd/config.toml set up for Kubernetes by the guides (SystemdCgroup = true)',
    conflicts: ['containerd-config-cgroupfs', 'debian-runc-package'],
    finding: { check: 'ContainerRuntimeCollision', named: false },
    recipe: () => ({ files: { '/etc/containerd/config.toml': CONFIG(true) }, listens: [] }),
  },
  {
    id: 'ufw-enabled-forward-drop',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'an admin ran "ufw enable" (Debian\'s ufw, DEFAULT_FORWARD_POLICY="DROP" as shipped): FORWARD is DROP now and at every boot',
    conflicts: ['nftables-stock-enabled'],
    finding: { check: 'IptablesForwardDrop', named: true },
    // What `ufw enable` changes on disk: ENABLED=yes (its unit is enabled by the package already).
    recipe: () => ({ files: {}, setup: ["sed -i 's/^ENABLED=no$/ENABLED=yes/' /etc/ufw/ufw.conf", 'systemctl enable ufw.service'], listens: [] }),
  },
  {
    id: 'nftables-forward-drop',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'a hardening guide\'s /etc/nftables.conf with "policy drop" on the forward chain, nftables.service enabled',
    conflicts: ['nftables-stock-enabled'],
    finding: { check: 'IptablesForwardDrop', named: true },
    recipe: () => ({ files: { '/etc/nftables.conf': NFTABLES_ROUTER }, setup: ['systemctl enable nftables.service'], listens: [] }),
  },
  {
    id: 'nftables-stock-enabled',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: "nftables.service enabled with Debian's stock /etc/nftables.conf (accept everywhere): no line",
    conflicts: ['ufw-enabled-forward-drop', 'nftables-forward-drop'],
    finding: { check: 'IptablesForwardDrop', named: false },
    recipe: () => ({ files: { '/etc/nftables.conf': NFTABLES_STOCK }, setup: ['systemctl enable nftables.service'], listens: [] }),
  },
  {
    id: 'ufw-enabled-ports-allowed',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: 'ufw enabled after "ufw allow" for 6443, 2379:2380, 10250, 10257 and 10259, as the kubeadm guides list them: no port line',
    conflicts: ['ufw-enabled-forward-drop', 'nftables-input-drop', 'nftables-forward-drop'],
    finding: { check: 'ControlPlanePortsFirewalled', named: false },
    // What `ufw allow PORT/tcp` leaves in user.rules and, with IPV6=yes (the shipped value), user6.rules (the lines
    // ufw writes between its RULES markers): the farm has no kubespray section, so IPv6 is judged too.
    recipe: () => ({
      files: {},
      setup: [
        "sed -i 's/^ENABLED=no$/ENABLED=yes/' /etc/ufw/ufw.conf",
        ...['', '6'].map(
          (t) =>
            `sed -i 's|^### RULES ###$|### RULES ###\\n${['6443', '2379:2380', '10250', '10257', '10259'].map((p) => `-A ufw${t}-user-input -p tcp --dport ${p} -j ACCEPT`).join('\\n')}|' /etc/ufw/user${t}.rules`,
        ),
        'systemctl enable ufw.service',
      ],
      listens: [],
    }),
  },
  {
    id: 'nftables-input-drop',
    kept: true,
    holds: 'nothing (an acceptance finding)',
    wild: "a hardening guide's /etc/nftables.conf: input policy drop, only established traffic, lo and ssh accepted",
    // nftables-forward-drop writes /etc/nftables.conf too (a deck with the docker entries put the two on one host).
    conflicts: ['nftables-stock-enabled', 'ufw-enabled-ports-allowed', 'nftables-forward-drop'],
    finding: { check: 'ControlPlanePortsFirewalled', named: true },
    recipe: () => ({ files: { '/etc/nftables.conf': NFTABLES_SSH_ONLY }, setup: ['systemctl enable nftables.service'], listens: [] }),
  },
];
