// Entries for the qemu tier: they turn swap on or keep a module from loading,
// which belongs to a kernel of their own. The container must never reach
// this machine's swap or modules, so the farm lists them and the qemu suite
// (test/vm) runs them: `scenario` names the VM scenario that covers the
// mechanism, or null where none does yet.
export default [
  {
    id: 'swap-unit-wanted-by-local-fs',
    // Issue 27's third defect: masking swap.target does not stop a .swap unit that local-fs.target wants.
    wild: 'vendor or image-builder .swap units under /lib pulled in by local-fs.target.wants (cloud images, appliance builds)',
    tier: 'qemu',
    // h26-swapmod's scenario swap-unit-cmdline boots this (not on this branch yet).
    scenario: null,
    files: {
      '/lib/systemd/system/swapfile.swap': '[Unit]\nDescription=vendor swap file\n\n[Swap]\nWhat=/swapfile\n\n[Install]\nWantedBy=local-fs.target\n',
      '/etc/systemd/system/local-fs.target.wants/swapfile.swap': { link: '/lib/systemd/system/swapfile.swap' },
    },
  },
  { id: 'fstab-swap-file', tier: 'qemu', scenario: 'swap-file', wild: 'the installer\'s or an admin\'s /swapfile line in /etc/fstab' },
  { id: 'fstab-swap-uuid', tier: 'qemu', scenario: 'swap-partition', wild: 'the Debian installer\'s swap partition, UUID= in fstab' },
  { id: 'fstab-swap-label-or-partuuid', tier: 'qemu', scenario: null, wild: 'LABEL=/PARTUUID= swap lines from cloud-init or hand edits' },
  { id: 'swap-unit-swap-target', tier: 'qemu', scenario: null, wild: 'a .swap unit in /etc/systemd/system enabled for swap.target' },
  { id: 'zram-generator', tier: 'qemu', scenario: null, wild: 'systemd-zram-generator config (zram-tools, Fedora habits) making swap at boot' },
  { id: 'service-helper-swapon', tier: 'qemu', scenario: null, wild: 'dphys-swapfile and similar services running swapon themselves' },
  { id: 'modprobe-d-blacklist', tier: 'qemu', scenario: null, wild: 'blacklist br_netfilter in /etc/modprobe.d (hardening baselines)' },
  { id: 'modprobe-d-install-false', tier: 'qemu', scenario: null, wild: '"install br_netfilter /bin/false" lines (CIS-style module disabling)' },
  { id: 'kernel-cmdline-module-blacklist', tier: 'qemu', scenario: null, wild: 'module_blacklist= / modprobe.blacklist= on the kernel command line via GRUB_CMDLINE_LINUX' },
  { id: 'rc-local-modprobe-r', tier: 'qemu', scenario: null, wild: 'rc.local "modprobe -r br_netfilter" left from a bridge-firewall howto' },
];
