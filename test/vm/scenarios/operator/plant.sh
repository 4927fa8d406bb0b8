#!/bin/bash
# A port holder no unit can be stopped for (issue 5): at boot a oneshot
# service runs `systemd-run --scope`, as an admin would by hand, so python's
# listener on 10257 lives in a transient manual-debug.scope, not in a service.
# Plus the lab's swap fault, which apply must still converge.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
units="$root/etc/systemd/system"
mkdir -p "$units/multi-user.target.wants"

# The lab's swap fault (see lab/plant.sh): a non-sparse swap file in fstab.
dd if=/dev/urandom of="$root/swapfile" bs=1M count=256 status=none
chmod 600 "$root/swapfile"
mkswap "$root/swapfile" >/dev/null
echo '/swapfile none swap sw 0 0' >>"$root/etc/fstab"

# systemd-run --scope moves itself into the new scope's cgroup, then execs
# python: the listener ends up in manual-debug.scope. The launcher waits until
# the scope is active so nothing of it is left in its own cgroup, and stays
# "active (exited)" so systemd has no reason to clean that cgroup up.
cat >"$units/debug-launcher.service" <<'UNIT'
[Unit]
Description=Leftover debug launcher (starts a transient scope, as by hand)

[Service]
Type=oneshot
RemainAfterExit=yes
TimeoutStartSec=120
ExecStart=/bin/sh -c 'systemd-run --scope --unit=manual-debug --description="debug http server started by hand" /usr/bin/python3 -m http.server 10257 >/dev/null 2>&1 & until systemctl -q is-active manual-debug.scope; do sleep 0.2; done'

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/debug-launcher.service "$units/multi-user.target.wants/debug-launcher.service"
