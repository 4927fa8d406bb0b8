#!/bin/bash
# Port holders that something besides their own [Install] links starts at
# boot (issue 17): disabling them is not enough.
# - metrics-agent.service (10250) is enabled, and also pulled in by
#   monitoring.target's `Wants=` in [Unit] (line 3), an enabled target.
# - report-server.service (10257) has no [Install] at all: an enabled
#   report-server.timer starts it once per boot.
# Both unit files are vendor-style (/usr/local/lib/systemd/system), so a mask
# link in /etc/systemd/system can override them.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
lib="$root/usr/local/lib/systemd/system"
etc="$root/etc/systemd/system"
mkdir -p "$lib" "$etc/multi-user.target.wants" "$etc/timers.target.wants"

cat >"$lib/metrics-agent.service" <<'UNIT'
[Unit]
Description=Metrics agent (left by the previous admin)

[Service]
ExecStart=/usr/bin/python3 -m http.server 10250
Restart=always
RestartSec=1

[Install]
WantedBy=multi-user.target
UNIT
ln -s /usr/local/lib/systemd/system/metrics-agent.service "$etc/multi-user.target.wants/metrics-agent.service"

cat >"$etc/monitoring.target" <<'UNIT'
[Unit]
Description=Monitoring stack
Wants=metrics-agent.service

[Install]
WantedBy=multi-user.target
UNIT
ln -s /etc/systemd/system/monitoring.target "$etc/multi-user.target.wants/monitoring.target"

cat >"$lib/report-server.service" <<'UNIT'
[Unit]
Description=Report server, started by its timer

[Service]
ExecStart=/usr/bin/python3 -m http.server 10257
UNIT
cat >"$lib/report-server.timer" <<'UNIT'
[Unit]
Description=Start the report server after boot

[Timer]
OnBootSec=2s
AccuracySec=1s

[Install]
WantedBy=timers.target
UNIT
ln -s /usr/local/lib/systemd/system/report-server.timer "$etc/timers.target.wants/report-server.timer"
