// Entries for the qemu tier: they turn swap on or keep a module from loading,
// which belongs to a kernel of their own. The container must never reach
// this machine's swap or modules, so the farm lists them and the qemu suite
// (test/vm) boots them: `scenario` names the VM scenario (test/vm/scenarios/)
// that plants the mechanism, and `kept` says whether the plan must keep its
// promises (a program can remove the mechanism; no person must decide).
// swap-module-sources judges its entries by the farm's rule (the plan's
// promises, test/vm/lib/promises.mjs); lab and swap-unit-cmdline by their own checks.
export default [
  {
    id: 'swap-unit-wanted-by-local-fs',
    // Issue 27's third defect: masking swap.target does not stop a .swap unit that local-fs.target wants.
    wild: 'vendor or image-builder .swap units under /lib pulled in by local-fs.target.wants (cloud images, appliance builds)',
    tier: 'qemu',
    scenario: 'swap-unit-cmdline',
    kept: true,
    files: {
      '/lib/systemd/system/swapfile.swap': '[Unit]\nDescription=vendor swap file\n\n[Swap]\nWhat=/swapfile\n\n[Install]\nWantedBy=local-fs.target\n',
      '/etc/systemd/system/local-fs.target.wants/swapfile.swap': { link: '/lib/systemd/system/swapfile.swap' },
    },
  },
  { id: 'fstab-swap-file', tier: 'qemu', scenario: 'lab', kept: true, wild: "the installer's or an admin's /swapfile line in /etc/fstab" },
  { id: 'fstab-swap-uuid', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: "the Debian installer's swap partition, UUID= in fstab" },
  { id: 'fstab-swap-label-or-partuuid', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: 'LABEL=/PARTUUID= swap lines from cloud-init or hand edits' },
  { id: 'swap-unit-swap-target', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: 'a .swap unit in /etc/systemd/system enabled for swap.target' },
  {
    id: 'zram-generator',
    tier: 'qemu',
    scenario: 'swap-module-sources',
    kept: true,
    wild: "Debian's systemd-zram-generator with its own config ([zram0]) making zram swap at boot (Fedora habits, small VMs)",
  },
  { id: 'service-helper-swapon', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: "Debian's dphys-swapfile (Raspberry Pi OS habits): its own service runs swapon on /var/swap" },
  { id: 'modprobe-d-blacklist', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: 'blacklist br_netfilter in /etc/modprobe.d (hardening baselines)' },
  { id: 'modprobe-d-install-false', tier: 'qemu', scenario: 'swap-module-sources', kept: true, wild: '"install br_netfilter /bin/false" lines (CIS-style module disabling)' },
  // Left to a person: the next boot's command line changes only with update-grub and a reboot (the plan names the grub line).
  { id: 'kernel-cmdline-module-blacklist', tier: 'qemu', scenario: 'swap-unit-cmdline', kept: false, wild: 'module_blacklist= / modprobe.blacklist= on the kernel command line via GRUB_CMDLINE_LINUX' },
  // Left to a person: their script (neutralise_scripts: true comments the line out).
  { id: 'rc-local-modprobe-r', tier: 'qemu', scenario: 'swap-module-sources', kept: false, wild: 'rc.local "modprobe -r br_netfilter" left from a bridge-firewall howto' },
];
