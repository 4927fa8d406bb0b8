#!/bin/bash
# Swap turned on by boot-time scripts, not fstab (issue 17): a previous
# admin's /etc/rc.local runs `swapon /swap-extra` and also turns forwarding
# off; an @reboot line in /etc/cron.d runs `/sbin/swapon /swap-cron`.
# SwapOff's fstab/unit/swap.target work does not touch either.
# Shared by boot-scripts (operator lines) and boot-scripts-neutralise.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

# Not sparse: mkfs.ext4 -d keeps holes and swapon refuses a file with holes.
for f in swap-extra swap-cron; do
  dd if=/dev/urandom of="$root/$f" bs=1M count=32 status=none
  chmod 600 "$root/$f"
  mkswap "$root/$f" >/dev/null
done

cat >"$root/etc/rc.local" <<'RC'
#!/bin/sh -e
# Left by the previous admin: extra swap for the build jobs.
swapon /swap-extra
sysctl -w net.ipv4.ip_forward=0
exit 0
RC
chmod 755 "$root/etc/rc.local"

mkdir -p "$root/etc/cron.d"
cat >"$root/etc/cron.d/swap-late" <<'CRON'
# Left by the previous admin.
@reboot root /sbin/swapon /swap-cron
CRON
chmod 644 "$root/etc/cron.d/swap-late"

# The stage measures once both scripts have run: rc-local.service (Type=forking)
# is started once /etc/rc.local exited; cron runs @reboot jobs right after it starts.
mkdir -p "$root/etc/systemd/system/vmtest-stage.service.d"
cat >"$root/etc/systemd/system/vmtest-stage.service.d/after-boot-scripts.conf" <<'UNIT'
[Unit]
After=rc-local.service cron.service
[Service]
ExecStartPre=/bin/sleep 5
UNIT
