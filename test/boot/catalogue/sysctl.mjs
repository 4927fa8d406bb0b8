// What writes sysctls at boot. Every entry sets net.ipv4.ip_forward (the one
// wanted key this tier can hold: it is per network namespace) to 0, directly
// or through net.ipv4.conf.all.forwarding, which the kernel couples with it;
// the benign ones set other keys or cannot run here, and must not break a
// promise either.
const FWD0 = 'net.ipv4.ip_forward = 0\n';
const exe = (content) => ({ mode: 0o755, content });
const oneshot = (desc, exec) => `[Unit]\nDescription=${desc}\nAfter=systemd-sysctl.service\n\n[Service]\nType=oneshot\nRemainAfterExit=yes\nExecStart=${exec}\n\n[Install]\nWantedBy=multi-user.target\n`;
const wants = (unit) => ({ [`/etc/systemd/system/multi-user.target.wants/${unit}`]: { link: `/etc/systemd/system/${unit}` } });
// ifupdown reads /etc/network/interfaces, which sources interfaces.d (Debian's default file says so).
const IFACES = 'auto lo\niface lo inet loopback\n\nsource /etc/network/interfaces.d/*\n';

export default [
  {
    id: 'sysctl-d-etc',
    kept: true,
    wild: 'router or VPN hardening guides: /etc/sysctl.d/60-*.conf with ip_forward = 0',
    recipe: () => ({ files: { '/etc/sysctl.d/60-no-routing.conf': `# hardening baseline\n${FWD0}` } }),
  },
  {
    id: 'sysctl-d-etc-after-ours',
    kept: true,
    // Sorts after k8s.conf, so it wins at boot unless it is dealt with.
    wild: 'CIS-style baselines named 99-*.conf or zz-*.conf so they win',
    recipe: () => ({ files: { '/etc/sysctl.d/99-zz-baseline.conf': `# CIS 3.1.1\n${FWD0}` } }),
  },
  {
    id: 'sysctl-d-usr-lib',
    kept: true,
    wild: 'a package\'s default in /usr/lib/sysctl.d (e.g. a hardening or appliance package)',
    recipe: () => ({ files: { '/usr/lib/sysctl.d/50-appliance.conf': FWD0 } }),
  },
  {
    id: 'sysctl-d-lib',
    kept: true,
    wild: 'older packages that still ship /lib/sysctl.d files',
    recipe: () => ({ files: { '/lib/sysctl.d/55-legacy-vendor.conf': FWD0 } }),
  },
  {
    id: 'sysctl-d-usr-local-lib',
    kept: true,
    wild: 'locally built software installed under /usr/local (make install of a network tool)',
    recipe: () => ({ files: { '/usr/local/lib/sysctl.d/40-local-build.conf': FWD0 } }),
  },
  {
    id: 'sysctl-d-etc-link-to-vendor',
    kept: true,
    // /etc/sysctl.d/NAME as a symlink to a file elsewhere.
    wild: 'config management that links /etc/sysctl.d entries to a checked-out repo',
    recipe: () => ({ files: { '/srv/baseline/sysctl/70-net.conf': FWD0, '/etc/sysctl.d/70-net.conf': { link: '/srv/baseline/sysctl/70-net.conf' } } }),
  },
  {
    id: 'sysctl-conf',
    kept: true,
    wild: '/etc/sysctl.conf edited by hand (the Debian file\'s own "#net.ipv4.ip_forward=1" line, set to 0)',
    recipe: () => ({ files: { '/etc/sysctl.conf': '# /etc/sysctl.conf - Configuration file for setting system variables\n\n# Uncomment the next line to enable packet forwarding for IPv4\nnet.ipv4.ip_forward=0\n' } }),
  },
  {
    id: 'sysctl-d-coupled-conf-all-forwarding',
    kept: true,
    // net.ipv4.conf.all.forwarding = 0 turns ip_forward off too (the kernel couples them).
    wild: 'per-interface forwarding baselines that set conf.all.forwarding',
    recipe: () => ({ files: { '/etc/sysctl.d/65-forwarding.conf': 'net.ipv4.conf.all.forwarding = 0\n' } }),
  },
  {
    id: 'unit-sysctl-w',
    wild: 'a oneshot unit running "sysctl -w" after boot (firewall or VPN setup units)',
    recipe: () => ({ files: { '/etc/systemd/system/netpolicy.service': oneshot('network policy', '/sbin/sysctl -w net.ipv4.ip_forward=0'), ...wants('netpolicy.service') } }),
  },
  {
    id: 'unit-second-command-sysctl-w',
    // A value of two commands: systemd runs both ("a ; b", systemd.service(5) "Command lines"); the write is the second.
    wild: 'ExecStart=/bin/true ; /sbin/sysctl -w ... (several commands on one line, as oneshot units allow)',
    recipe: () => ({ files: { '/etc/systemd/system/twostep.service': oneshot('two steps', '/bin/true ; /sbin/sysctl -w net.ipv4.ip_forward=0'), ...wants('twostep.service') } }),
  },
  {
    id: 'unit-sysctl-p-file',
    // sysctl -p FILE with an ordinary readable file (issue 26: read it with the same parser).
    wild: 'units that load a private tuning file with "sysctl -p /etc/<app>/sysctl.conf"',
    recipe: () => ({
      files: { '/etc/router/tuning.conf': `# router tuning\n${FWD0}`, '/etc/systemd/system/tuning.service': oneshot('load tuning', '/sbin/sysctl -p /etc/router/tuning.conf'), ...wants('tuning.service') },
    }),
  },
  {
    id: 'unit-sh-c-proc-sys',
    // A write by redirection in a unit's command line.
    wild: 'ExecStart=/bin/sh -c "echo 0 > /proc/sys/..." in hand-written units',
    recipe: () => ({ files: { '/etc/systemd/system/procwrite.service': oneshot('write /proc/sys', "/bin/sh -c 'echo 0 > /proc/sys/net/ipv4/ip_forward'"), ...wants('procwrite.service') } }),
  },
  {
    id: 'rc-local-sysctl-w',
    wild: 'rc.local lines from old howtos ("sysctl -w net.ipv4.ip_forward=0")',
    late: 1,
    recipe: () => ({ rcLocal: ['sysctl -w net.ipv4.ip_forward=0 >/dev/null'] }),
  },
  {
    id: 'rc-local-proc-sys-redirect',
    // Issue 26: a redirection into /proc/sys is a sysctl write.
    wild: 'rc.local "echo 0 > /proc/sys/net/ipv4/ip_forward" (the pre-sysctl.d idiom)',
    late: 1,
    recipe: () => ({ rcLocal: ['echo 0 > /proc/sys/net/ipv4/ip_forward'] }),
  },
  {
    id: 'rc-local-sysctl-p-file',
    wild: 'rc.local loading a saved file: "sysctl -p /etc/sysctl.d/router.saved"',
    late: 1,
    recipe: () => ({ files: { '/etc/router.sysctl': FWD0 }, rcLocal: ['sysctl -p /etc/router.sysctl >/dev/null'] }),
  },
  {
    id: 'script-called-from-unit',
    // The unit runs a script; the script writes the key.
    wild: 'units whose ExecStart= is a site script (/usr/local/sbin/net-setup) that sets sysctls',
    recipe: () => ({
      files: {
        '/usr/local/sbin/net-setup': exe('#!/bin/sh\n# site network setup\nsysctl -w net.ipv4.ip_forward=0 >/dev/null\n'),
        '/etc/systemd/system/net-setup.service': oneshot('site network setup', '/usr/local/sbin/net-setup'),
        ...wants('net-setup.service'),
      },
    }),
  },
  {
    id: 'cron-reboot-sysctl',
    wild: '@reboot root sysctl lines in /etc/cron.d (a quick fix that stuck)',
    late: 3,
    recipe: () => ({ files: { '/etc/cron.d/netfix': '@reboot root /sbin/sysctl -w net.ipv4.ip_forward=0\n' } }),
  },
  {
    id: 'ifupdown-post-up-sysctl',
    // ifupdown's networking.service brings lo up at boot and runs its post-up lines.
    wild: '/etc/network/interfaces stanzas with "post-up sysctl -w ..." (Debian servers with ifupdown)',
    recipe: () => ({
      files: { '/etc/network/interfaces': IFACES, '/etc/network/interfaces.d/lo-tuning': 'iface lo inet loopback\n    post-up /sbin/sysctl -w net.ipv4.ip_forward=0\n' },
    }),
  },
  {
    id: 'ifupdown-if-up-d-hook',
    // run-parts runs /etc/network/if-up.d/* for each interface ifupdown brings up (lo here).
    wild: 'if-up.d hooks from VPN or firewall packages, or admins',
    recipe: () => ({
      files: { '/etc/network/interfaces': IFACES, '/etc/network/if-up.d/forwarding-off': exe('#!/bin/sh\n[ "$MODE" = start ] || exit 0\nsysctl -w net.ipv4.ip_forward=0 >/dev/null\nexit 0\n') },
    }),
  },
  {
    id: 'nm-dispatcher-hook',
    kept: true,
    // Benign here: NetworkManager is not installed, so nothing runs the hook (left behind by a removed package).
    wild: 'NetworkManager dispatcher scripts (laptops turned servers, RHEL habits); often left after NM is removed',
    recipe: () => ({ files: { '/etc/NetworkManager/dispatcher.d/90-forwarding': exe('#!/bin/sh\n[ "$2" = up ] && sysctl -w net.ipv4.ip_forward=0\nexit 0\n') } }),
  },
  {
    id: 'networkd-ipforward',
    kept: true,
    // systemd-networkd's IPForward= on a .network file; networkd only ever turns forwarding on.
    wild: 'systemd-networkd hosts with IPForward= in a .network file (cloud images, routers)',
    recipe: () => ({
      files: { '/etc/systemd/network/10-lo.network': '[Match]\nName=lo\n\n[Network]\nIPForward=no\n' },
      setup: ['systemctl enable systemd-networkd.service >/dev/null 2>&1'],
    }),
  },
  {
    id: 'benign-other-keys',
    kept: true,
    // Keys the desired state does not name: no promise is about them.
    wild: 'performance tuning (somaxconn, tcp_fin_timeout) on every web server',
    recipe: () => ({ files: { '/etc/sysctl.d/30-web.conf': 'net.core.somaxconn = 4096\nnet.ipv4.tcp_fin_timeout = 15\n' } }),
  },
  {
    id: 'sysctl-d-sets-wanted-value',
    kept: true,
    // Already 1: agrees with the desired state.
    wild: 'hosts that ran Docker or a VPN before (their sysctl.d file turns forwarding on)',
    recipe: () => ({ files: { '/etc/sysctl.d/99-docker-fwd.conf': 'net.ipv4.ip_forward = 1\n' } }),
  },
  {
    id: 'ifup-hook-sysctl-p-file',
    kept: true,
    // Issue 48: an if-up hook loads a plain file; conflict_policy: resolve (the farm's default) comments the line out of the file.
    wild: 'if-up.d hooks from old router setups that run "sysctl -p /etc/network/<name>.conf" when an interface comes up',
    recipe: () => ({
      files: {
        '/etc/network/interfaces': IFACES,
        '/etc/network/forwarding.conf': `# routing for the old uplink\n${FWD0}`,
        '/etc/network/if-up.d/forwarding': exe('#!/bin/sh\nsysctl -q -p /etc/network/forwarding.conf\n'),
      },
    }),
  },
  {
    id: 'wg-quick-preup-sysctl',
    // Issue 48: wg-quick@wg0.service (wireguard-tools' own unit) runs the configuration's PreUp before it adds the
    // interface, so the hook runs at boot even in a container that has no wireguard link type (wg-quick then fails).
    wild: 'WireGuard servers whose /etc/wireguard/wg0.conf PreUp or PostUp runs sysctl (VPN setup guides)',
    recipe: () => ({
      files: {
        '/etc/wireguard/wg0.conf': {
          mode: 0o600,
          content: '[Interface]\nAddress = 10.8.0.1/24\nListenPort = 51820\nPrivateKey = oK56DE9Ue9zK76rAc8pBl6opph+1v36lm7cXXsQKrQM=\nPreUp = sysctl -w net.ipv4.ip_forward=0\n',
        },
      },
      setup: ['systemctl enable wg-quick@wg0.service >/dev/null 2>&1'],
    }),
  },
  {
    id: 'openvpn-up-script-sysctl',
    // Issue 48: no `systemctl enable`: openvpn.service is enabled by the package, and its openvpn-generator starts every
    // /etc/openvpn/*.conf as openvpn@NAME.service. `dev null` (a static peer-to-peer tunnel without a tun device) lets
    // openvpn run its up script in a container; script-security 2 lets it run scripts at all.
    wild: 'OpenVPN gateways whose /etc/openvpn/NAME.conf runs an up script that sets forwarding (site-to-site guides)',
    recipe: () => ({
      files: {
        '/etc/openvpn/office.conf': 'dev null\nifconfig-noexec\nscript-security 2\nup office-up.sh\n',
        '/etc/openvpn/office-up.sh': exe('#!/bin/sh\n# routing for the office tunnel\nsysctl -w net.ipv4.ip_forward=0\n'),
      },
    }),
  },
];
