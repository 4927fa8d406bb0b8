#!/bin/bash
# ip forwarding turned off through a key the kernel couples with ip_forward
# (issue 16): writing net.ipv4.conf.all.forwarding sets net.ipv4.ip_forward,
# since both are the same kernel variable. No line names ip_forward = 0.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
etc="$root/etc/sysctl.d"
mkdir -p "$etc"

# Sorts after k8s.conf ("z" > "k"): at boot and under sysctl --system its
# conf.all.forwarding = 0 lands after our ip_forward = 1.
cat >"$etc/zz-hardening.conf" <<'CONF'
# host hardening (previous admin)
net.ipv4.conf.all.send_redirects = 0
net.ipv4.conf.all.forwarding = 0
vm.swappiness = 10
CONF

# Sorts before k8s.conf, and only wins at boot: systemd-sysctl keeps
# ip_forward in 10-router.conf's slot (k8s.conf repeats the value 1), so
# 50-no-route.conf's coupled write comes after it; sysctl --system writes
# every line in file order, so there k8s.conf comes last.
printf '# router role (retired)\nnet.ipv4.ip_forward = 1\n' >"$etc/10-router.conf"
printf '# no routing on this host\nnet.ipv4.conf.all.forwarding = 0\n' >"$etc/50-no-route.conf"
