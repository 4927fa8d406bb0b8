#!/bin/bash
# The boot farm's qemu-tier catalogue entries (test/boot/catalogue/qemu.mjs)
# that no other scenario boots, planted as the real packages and admins leave
# them. What each one is and why they share one VM: expect.mjs.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS DISKS_DIR}
disks=${2:?usage: plant.sh ROOTFS DISKS_DIR}
here=$(cd "$(dirname "$0")" && pwd)
# The values expect.mjs checks against.
uuid=5e1f0c2a-7b3d-4c59-9a61-0d2f4e8b1c07
label=oldswap
signature=c0ffee01

# fstab-swap-uuid, fstab-swap-label-or-partuuid: a second disk (vdb) with an
# MBR and three swap partitions, as the Debian installer lays out a BIOS
# machine (mkswap's UUID and label are in each partition's swap header).
mapfile -t parts < <(node "$here/../../lib/mbr.mjs" "$disks/vdb.img" "$signature" 16 16 16)
i=0
for args in "-U $uuid" "-L $label" ""; do
  read -r offset size <<<"${parts[$i]}"
  part=$(mktemp)
  truncate -s "$size" "$part"
  # shellcheck disable=SC2086 # $args is two words or none; a partition image has holes, which matter only to a swap file
  mkswap $args "$part" >/dev/null 2>&1
  dd if="$part" of="$disks/vdb.img" bs=1M seek=$((offset / 1048576)) conv=notrunc status=none
  rm -f "$part"
  i=$((i + 1))
done
cat >>"$root/etc/fstab" <<FSTAB
# swap was on /dev/vdb1 during installation
UUID=$uuid none            swap    sw              0       0
# added by hand: the second swap partition by its label, the third by PARTUUID (cloud-init writes these)
LABEL=$label none swap sw 0 0
PARTUUID=$signature-03 none swap sw 0 0
FSTAB

# swap-unit-swap-target: an admin's .swap unit in /etc/systemd/system,
# enabled (systemctl enable) for swap.target. Not sparse: mkfs.ext4 -d keeps
# holes and swapon refuses a file with holes.
dd if=/dev/urandom of="$root/swapfile2" bs=1M count=32 status=none
chmod 600 "$root/swapfile2"
mkswap "$root/swapfile2" >/dev/null
cat >"$root/etc/systemd/system/swapfile2.swap" <<'UNIT'
[Unit]
Description=Swap file for the build jobs

[Swap]
What=/swapfile2

[Install]
WantedBy=swap.target
UNIT
mkdir -p "$root/etc/systemd/system/swap.target.wants"
ln -s /etc/systemd/system/swapfile2.swap "$root/etc/systemd/system/swap.target.wants/swapfile2.swap"

# zram-generator: Debian's systemd-zram-generator (expect.mjs guest.packages)
# with its own /etc/systemd/zram-generator.conf ([zram0]: zram swap at boot).
test -f "$root/etc/systemd/zram-generator.conf"
test -x "$root/lib/systemd/system-generators/zram-generator"

# service-helper-swapon: Debian's dphys-swapfile (guest.packages), enabled by
# its postinst; dphys-swapfile.service runs `dphys-swapfile setup` and
# `swapon` itself at boot. The admin set the size, as its conffile invites
# (the computed default is twice the RAM).
test -L "$root/etc/systemd/system/multi-user.target.wants/dphys-swapfile.service"
sed -i 's/^#CONF_SWAPSIZE=$/CONF_SWAPSIZE=64/' "$root/etc/dphys-swapfile"
grep -q '^CONF_SWAPSIZE=64$' "$root/etc/dphys-swapfile"

# modprobe-d-blacklist: a hardening baseline's blacklist line. kmod applies it
# to what systemd-modules-load loads at boot, not to `modprobe br_netfilter`.
cat >"$root/etc/modprobe.d/bridge-hardening.conf" <<'CONF'
# hardening baseline: this host does not bridge
blacklist br_netfilter
CONF

# modprobe-d-install-false: CIS-style disabling; every modprobe runs /bin/false instead.
cat >"$root/etc/modprobe.d/cis-disable-modules.conf" <<'CONF'
# CIS: disable network modules this host does not use
install br_netfilter /bin/false
CONF

# rc-local-modprobe-r: left from a bridge-firewall howto (line 3). At the
# first boot nothing has loaded br_netfilter yet, so the line fails quietly
# (no `sh -e`); once something loads the module at boot, it removes it.
cat >"$root/etc/rc.local" <<'RC'
#!/bin/sh
# bridge firewall off: netfilter must not see bridged traffic
modprobe -r br_netfilter
exit 0
RC
chmod 755 "$root/etc/rc.local"

# The stage measures once rc.local and dphys-swapfile have run (both are
# wanted by multi-user.target, but nothing orders the target after them).
mkdir -p "$root/etc/systemd/system/vmtest-stage.service.d"
cat >"$root/etc/systemd/system/vmtest-stage.service.d/after-sources.conf" <<'UNIT'
[Unit]
After=rc-local.service dphys-swapfile.service
UNIT
