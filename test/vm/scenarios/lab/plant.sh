#!/bin/bash
# The seed's faults, exactly: an active swap file listed in fstab, a
# monitoring agent with Restart=always on 10250, a sysctl file sorting after
# k8s.conf that turns ip_forward off (plus two unrelated keys that must
# survive), and overlay/br_netfilter not loaded (nothing in the base loads them).
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

# Swap: mkfs.ext4 -d keeps holes and swapon refuses a file with holes, so the
# file is filled with random data before mkswap.
dd if=/dev/urandom of="$root/swapfile" bs=1M count=256 status=none
chmod 600 "$root/swapfile"
mkswap "$root/swapfile" >/dev/null
echo '/swapfile none swap sw 0 0' >>"$root/etc/fstab"

# The monitoring agent: a plain TCP listener that systemd respawns.
mkdir -p "$root/opt/monitoring-agent"
cat >"$root/opt/monitoring-agent/agent.py" <<'PY'
import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("0.0.0.0", 10250))
s.listen(16)
while True:
    c, _ = s.accept()
    c.sendall(b"ok\n")
    c.close()
PY
cat >"$root/etc/systemd/system/monitoring-agent.service" <<'UNIT'
[Unit]
Description=Legacy monitoring agent (left by the previous admin)

[Service]
ExecStart=/usr/bin/python3 /opt/monitoring-agent/agent.py
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/monitoring-agent.service \
  "$root/etc/systemd/system/multi-user.target.wants/monitoring-agent.service"

# Sorts after k8s.conf ("s" > "k"): reverts ip_forward at boot.
cat >"$root/etc/sysctl.d/security-baseline.conf" <<'CONF'
# security baseline (previous admin)
net.ipv4.ip_forward = 0
vm.swappiness = 10
net.ipv4.conf.all.log_martians = 1
CONF
