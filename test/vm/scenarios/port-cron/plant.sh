#!/bin/bash
# A control-plane port held by a cron job (issue 18): a previous admin's
# @reboot line in /etc/cron.d starts python's http.server on 2379. The
# listener lives in cron.service's cgroup but is not cron's own process;
# stopping cron.service for it would end every cron job on the host.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}

mkdir -p "$root/etc/cron.d" "$root/etc/systemd/system/multi-user.target.wants"
cat >"$root/etc/cron.d/legacy-etcd" <<'CRON'
# Left by the previous admin: a stand-in for etcd while migrating.
SHELL=/bin/sh
PATH=/usr/local/sbin:/usr/local/bin:/sbin:/bin:/usr/sbin:/usr/bin

*/30 * * * * root test -d /var/tmp
@reboot root python3 -m http.server 2379
CRON
chmod 644 "$root/etc/cron.d/legacy-etcd"

# cron is enabled by its package; make sure, so the "still enabled" checks mean something.
# (-L too: the package's link is absolute, so it dangles seen from the build machine.)
if [ ! -L "$root/etc/systemd/system/multi-user.target.wants/cron.service" ] && [ ! -e "$root/etc/systemd/system/multi-user.target.wants/cron.service" ]; then
  ln -s /lib/systemd/system/cron.service "$root/etc/systemd/system/multi-user.target.wants/cron.service"
fi
