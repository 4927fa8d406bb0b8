#!/bin/bash
# sysctl fixtures for the ordering rules (issue 4), one key each, so the
# engine's verdicts can be compared with what systemd-sysctl set at boot and
# what `sysctl --system` sets. Every planted value differs from the kernel's
# default, so a rule that did not apply shows.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
etc="$root/etc/sysctl.d"
usr="$root/usr/lib/sysctl.d"
mkdir -p "$etc" "$usr"

# A later /etc file wins: 41.
printf 'net.ipv4.tcp_fin_timeout = 30\n' >"$etc/10-early.conf"
printf '# later file\nnet.ipv4.tcp_fin_timeout=41\n' >"$etc/20-later.conf"

# A vendor file in /usr/lib sorting later ("v" > "5") beats /etc: 7.
printf 'net.ipv4.tcp_keepalive_probes = 5\n' >"$etc/50-local.conf"
printf '# vendor defaults\nnet.ipv4.tcp_keepalive_probes = 7\n' >"$usr/vendor-net.conf"

# A same-name /etc file overrides the vendor file as a whole: 44.
printf 'net.ipv4.tcp_keepalive_intvl = 33\n' >"$usr/70-vendor-tuning.conf"
printf 'net.ipv4.tcp_keepalive_intvl = 44\n' >"$etc/70-vendor-tuning.conf"

# An /etc -> /dev/null mask hides a later vendor file: the earlier 5 stays.
printf 'net.ipv4.tcp_retries1 = 5\n' >"$etc/05-base.conf"
printf 'net.ipv4.tcp_retries1 = 6\n' >"$usr/75-vendor-masked.conf"
ln -sfn /dev/null "$etc/75-vendor-masked.conf"

# A glob and an explicit key: the explicit lo comes first in the file, so only
# "explicit beats glob" (not file order) keeps lo at 0; all gets 2.
cat >"$etc/80-rp.conf" <<'CONF'
net.ipv4.conf.lo.rp_filter = 0
net.ipv4.conf.*.rp_filter = 2
CONF

# /etc/sysctl.conf: read at boot only through Debian's 99-sysctl.conf link,
# so zz-late.conf beats it (900); `sysctl --system` reads it last (600).
if [ ! -L "$etc/99-sysctl.conf" ]; then
  echo 'plant: base image lacks /etc/sysctl.d/99-sysctl.conf -> ../sysctl.conf; creating it' >&2
  ln -sfn ../sysctl.conf "$etc/99-sysctl.conf"
fi
[ "$(readlink "$etc/99-sysctl.conf")" = ../sysctl.conf ]
printf '\n# planted by the sysctl-order scenario\nnet.ipv4.tcp_keepalive_time = 600\n' >>"$root/etc/sysctl.conf"
printf 'net.ipv4.tcp_keepalive_time = 900\n' >"$etc/zz-late.conf"

# A "-" prefix: set when present (9); a missing key is no error.
cat >"$etc/30-dash.conf" <<'CONF'
-net.ipv4.tcp_retries2 = 9
-net.ipv4.no_such_key_vmtest = 1
CONF

# ";" and "#" comments, leading whitespace included, set nothing: 4 stays.
printf 'net.ipv4.tcp_syn_retries = 4\n' >"$etc/40-syn.conf"
cat >"$etc/41-syn-comments.conf" <<'CONF'
; net.ipv4.tcp_syn_retries = 2
   ;net.ipv4.tcp_syn_retries=3
  # net.ipv4.tcp_syn_retries = 1
CONF

# A key written with slashes: 3.
printf 'net/ipv4/tcp_synack_retries = 3\n' >"$etc/45-slashes.conf"
