#!/bin/bash
# Issue 26: swap that masking swap.target does not stop, and a module the
# kernel command line blocks.
# - /swap-vendor: a vendor .swap unit in /lib/systemd/system, linked by the
#   vendor under local-fs.target.wants (as packages that ship swap do).
# - /swap-dep: an admin's .swap unit in /etc/systemd/system with no [Install],
#   pulled in by Wants= of an enabled service.
# - br_netfilter: `module_blacklist=br_netfilter` on the kernel command line
#   (expect.mjs kernel_args, as GRUB would pass it) and in /etc/default/grub,
#   the next boot's configuration.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

# Not sparse: mkfs.ext4 -d keeps holes and swapon refuses a file with holes.
for f in swap-vendor swap-dep; do
  dd if=/dev/urandom of="$root/$f" bs=1M count=32 status=none
  chmod 600 "$root/$f"
  mkswap "$root/$f" >/dev/null
done

# systemd loads a .swap unit only under the escaped name of its What= path (systemd-escape -p --suffix=swap /swap-vendor).
vendor='swap\x2dvendor.swap'
dep='swap\x2ddep.swap'
cat >"$root/lib/systemd/system/$vendor" <<'UNIT'
[Unit]
Description=Vendor swap file

[Swap]
What=/swap-vendor
UNIT
mkdir -p "$root/lib/systemd/system/local-fs.target.wants"
ln -s "../$vendor" "$root/lib/systemd/system/local-fs.target.wants/$vendor"

cat >"$root/etc/systemd/system/$dep" <<'UNIT'
[Unit]
Description=Swap for the build cache

[Swap]
What=/swap-dep
UNIT
cat >"$root/etc/systemd/system/build-cache.service" <<UNIT
[Unit]
Description=Build cache (wants its own swap)
Wants=$dep
After=$dep

[Service]
ExecStart=/bin/sleep infinity

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s /etc/systemd/system/build-cache.service "$root/etc/systemd/system/multi-user.target.wants/build-cache.service"

# The next boot's command line as GRUB builds it (line 6 of the file).
mkdir -p "$root/etc/default"
cat >"$root/etc/default/grub" <<'GRUB'
# If you change this file, run 'update-grub' afterwards to update
GRUB_DEFAULT=0
GRUB_TIMEOUT=5
GRUB_DISTRIBUTOR=`lsb_release -i -s 2> /dev/null || echo Debian`
GRUB_CMDLINE_LINUX_DEFAULT="quiet"
GRUB_CMDLINE_LINUX="module_blacklist=br_netfilter"
GRUB
