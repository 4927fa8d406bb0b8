#!/bin/bash
# A boot-time writer no catalogue knows (issue 48): a unit with an unusual
# name, started at every boot after systemd-sysctl, whose program is Python,
# which the boot-script scan does not read (it reads shell, and knows sysctl
# and tee): it sets net.ipv4.ip_forward to 0. The plan cannot see it and
# promises ip_forward 1 at the next boot; the boot watch installed by
# `apply --watch-next-boot` names it from the kernel's record after the reboot.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

cat >"$root/etc/systemd/system/zz-nic-offload-tune.service" <<'UNIT'
[Unit]
Description=Tune NIC offloads (left by the previous admin)
After=systemd-sysctl.service network-pre.target

[Service]
Type=oneshot
ExecStart=/usr/bin/python3 -c "open('/proc/sys/net/ipv4/ip_forward', 'w').write('0')"

[Install]
WantedBy=multi-user.target
UNIT
mkdir -p "$root/etc/systemd/system/multi-user.target.wants"
ln -s /etc/systemd/system/zz-nic-offload-tune.service "$root/etc/systemd/system/multi-user.target.wants/zz-nic-offload-tune.service"

# At the watched boot the stage looks once the watch has ended (its stopper is
# a oneshot that ends 30 s after multi-user.target): the record is complete and
# the units have removed their own links. At boot 1 the stopper does not exist
# and the ordering is void.
mkdir -p "$root/etc/systemd/system/vmtest-stage.service.d"
cat >"$root/etc/systemd/system/vmtest-stage.service.d/after-boot-watch.conf" <<'UNIT'
[Unit]
After=zz-nic-offload-tune.service k8s-host-reconcile-boot-watch-stop.service
UNIT
