#!/bin/bash
# Port holders the lab does not show: a socket-activated listener on 2379
# (PID 1 holds the socket; the .socket unit owns the port) and an IPv6-only
# listener on 6443 (invisible in /proc/net/tcp, only in tcp6).
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
units="$root/etc/systemd/system"
mkdir -p "$root/opt/legacy" "$units/sockets.target.wants" "$units/multi-user.target.wants"

cat >"$root/opt/legacy/activated.py" <<'PY'
# Serves the listening socket systemd passes as fd 3 (Accept=no).
import socket
s = socket.socket(fileno=3)
while True:
    c, _ = s.accept()
    c.sendall(b"ok\n")
    c.close()
PY
cat >"$units/legacy-etcd.socket" <<'UNIT'
[Unit]
Description=Legacy etcd proxy socket

[Socket]
ListenStream=2379
Accept=no

[Install]
WantedBy=sockets.target
UNIT
cat >"$units/legacy-etcd.service" <<'UNIT'
[Unit]
Description=Legacy etcd proxy (socket activated)
Requires=legacy-etcd.socket

[Service]
ExecStart=/usr/bin/python3 /opt/legacy/activated.py

[Install]
WantedBy=multi-user.target
Also=legacy-etcd.socket
UNIT
# Both enabled, as `systemctl enable legacy-etcd.service` would do: the service
# starts at boot and takes over the socket, so PID 1 and python both hold 2379.
ln -sf /etc/systemd/system/legacy-etcd.socket "$units/sockets.target.wants/legacy-etcd.socket"
ln -sf /etc/systemd/system/legacy-etcd.service "$units/multi-user.target.wants/legacy-etcd.service"

cat >"$root/opt/legacy/v6only.py" <<'PY'
import socket
s = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind(("::", 6443))
s.listen(16)
while True:
    c, _ = s.accept()
    c.close()
PY
cat >"$units/legacy-apiserver.service" <<'UNIT'
[Unit]
Description=Legacy API gateway (IPv6 only)

[Service]
ExecStart=/usr/bin/python3 /opt/legacy/v6only.py
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -sf /etc/systemd/system/legacy-apiserver.service "$units/multi-user.target.wants/legacy-apiserver.service"
