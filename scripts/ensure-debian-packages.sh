#!/usr/bin/env bash
# The VM suite needs qemu, mmdebstrap, debugfs and ansible from Debian's
# packages; the unit tests' oracles need kmod, util-linux, systemd and
# python3, and lsb-release (the facts model reads what its script reads);
# systemd-nspawn (systemd-container) boots a stock root to check ExecStart=
# words against systemd, and the boot farm's hosts; ifupdown's ifquery reads
# interfaces(5) files for the boot-script test (it is only run with -i FILE); `npm run deb` and its test need dpkg-deb,
# go-md2man (the man page) and lintian; the fleet report's browser test drives Debian's chromium
# (headless); the container fleet test reaches its hosts with ssh and ansible-galaxy installs the
# collection. Install whatever is missing (as root), or say exactly
# what to do.
set -euo pipefail

declare -A need=(
  [qemu-system-x86_64]=qemu-system-x86
  [mmdebstrap]=mmdebstrap
  [systemd-nspawn]=systemd-container
  [ansible]=ansible-core
  [debugfs]=e2fsprogs
  [mkfs.ext4]=e2fsprogs
  [unshare]=util-linux
  [ip]=iproute2
  [systemctl]=systemd
  [sysctl]=procps
  [modprobe]=kmod
  [findmnt]=util-linux
  [blkid]=util-linux
  [setpriv]=util-linux
  [mkswap]=util-linux
  [systemd-analyze]=systemd
  [python3]=python3
  [lsb_release]=lsb-release
  [dpkg-deb]=dpkg
  [go-md2man]=go-md2man
  [lintian]=lintian
  [ifquery]=ifupdown
  [dash]=dash
  [chromium]=chromium
  [ssh]=openssh-client
  [ssh-keygen]=openssh-client
  [ansible-galaxy]=ansible-core
)
missing=()
for cmd in "${!need[@]}"; do
  command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${need[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ]; then
  echo "test dependencies missing: ${pkgs[*]}; run as root, or: sudo apt-get update && sudo apt-get install -y ${pkgs[*]}" >&2
  exit 1
fi
echo "installing test dependencies: ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update
apt-get install -y "${pkgs[@]}"
