#!/usr/bin/env bash
# The Debian packages each npm script needs, installed when missing (as root),
# or one line naming them and the command that installs them (exit 1).
#
#   bash scripts/ensure-debian-packages.sh [GROUP...]   (no group: all of them)
#
# unit:  the unit tests' oracles: kmod, util-linux, systemd, procps, python3,
#        lsb-release (the facts model reads what its script reads), ifupdown's
#        ifquery (read with -i FILE), dash, ansible-core (the Ansible oracles),
#        systemd-nspawn (systemd-container: a stock root checks ExecStart= words
#        against systemd), mmdebstrap (the stock roots), dpkg-deb, go-md2man
#        and lintian for the package test, wg-quick (wireguard-tools: its
#        parse_options is the oracle of the PreUp/PostUp reader), shorewall (its compiler is the
#        oracle of the IP_FORWARDING reader; installing it enables nothing), tuned (its profile
#        loader is the oracle of the tuned reader; its postinst enables and, where systemd runs,
#        starts tuned.service, which would tune this machine's sysctls: see below), openvpn (the
#        oracle of the OpenVPN option reader, run with --dev null in a namespace; its postinst
#        enables openvpn.service: disabled after the install, see below), network-manager
#        (NetworkManager --print-config is the oracle of the unmanaged-devices merge; its postinst
#        enables and starts NetworkManager.service, which would take over this machine's network:
#        see below), iptables and nftables (iptables-restore and nft load a ruleset in a network
#        namespace the test makes: the oracles of the rules.v4 and nftables.conf readers; nftables'
#        unit is not enabled by its package), chromium (the fleet report's page in
#        a real browser, headless), ansible-galaxy (the collection's test) and
#        ansible-lint (the collection's lint test, production profile)
# vm:    the VM suite: qemu, mmdebstrap, debugfs and mkfs.ext4, ansible-core
# boot:  the boot farm: systemd-nspawn and mmdebstrap
# deb:   `npm run deb`: dpkg-deb and go-md2man (the man page)
# fleet: the container fleet test: systemd-nspawn, mmdebstrap, ip, ssh and
#        ssh-keygen (openssh-client), ansible-playbook and ansible-galaxy
# collection: `npm run collection`: ansible-galaxy builds the tarball; ansible-lint
#        (the collection's sources lint clean with the production profile)
# bench: `npm run bench`: hyperfine (ansible-core, when present, is a yardstick)
# npm:   no Debian package: only the check below
# Each npm script names its groups in its pre-script (package.json). Every
# group first checks that `npm ci` has installed the project's own packages.
set -euo pipefail

here="${BASH_SOURCE[0]}"
[[ $here == */* ]] || here="./$here"
repo="$(cd "${here%/*}/.." && pwd)"
npm_missing="$(cd "$repo" && node -e '
  const fs = require("fs");
  const p = JSON.parse(fs.readFileSync("package.json", "utf8"));
  const names = Object.keys({ ...p.dependencies, ...p.devDependencies });
  process.stdout.write(names.filter((n) => !fs.existsSync(`node_modules/${n}/package.json`)).join(" "));
')"
if [ -n "$npm_missing" ]; then
  echo "npm packages missing: $npm_missing; run: npm ci" >&2
  exit 1
fi

declare -A package=(
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
  [hyperfine]=hyperfine
  [chromium]=chromium
  [ssh]=openssh-client
  [ssh-keygen]=openssh-client
  [ansible-galaxy]=ansible-core
  [ansible-lint]=ansible-lint
  [wg-quick]=wireguard-tools
  [shorewall]=shorewall
  [tuned]=tuned
  [openvpn]=openvpn
  [NetworkManager]=network-manager
  [iptables-restore]=iptables
  [nft]=nftables
)
declare -A group=(
  [unit]="unshare ip systemctl sysctl modprobe findmnt blkid setpriv mkswap systemd-analyze python3 lsb_release ifquery dash ansible systemd-nspawn mmdebstrap dpkg-deb go-md2man lintian chromium ansible-galaxy ansible-lint wg-quick shorewall tuned openvpn NetworkManager iptables-restore nft"
  [vm]="qemu-system-x86_64 mmdebstrap debugfs mkfs.ext4 mkswap ansible"
  [boot]="systemd-nspawn mmdebstrap"
  [deb]="dpkg-deb go-md2man"
  [bench]="hyperfine"
  [fleet]="systemd-nspawn mmdebstrap ip ssh ssh-keygen ansible ansible-galaxy"
  [collection]="ansible-galaxy ansible-lint"
  [npm]=""
)

groups=("$@")
[ ${#groups[@]} -eq 0 ] && groups=(unit vm boot deb fleet)
cmds=()
for g in "${groups[@]}"; do
  if [ -z "${group[$g]+x}" ]; then
    echo "ensure-debian-packages: no group $g (the groups: ${!group[*]})" >&2
    exit 2
  fi
  read -r -a words <<<"${group[$g]}"
  cmds+=(${words[@]+"${words[@]}"})
done

missing=()
for cmd in ${cmds[@]+"${cmds[@]}"}; do
  command -v "$cmd" >/dev/null 2>&1 || PATH="$PATH:/usr/sbin:/sbin" command -v "$cmd" >/dev/null 2>&1 || missing+=("${package[$cmd]}")
done
[ ${#missing[@]} -eq 0 ] && exit 0
mapfile -t pkgs < <(printf '%s\n' "${missing[@]}" | sort -u)
if [ "$(id -u)" != 0 ] || ! command -v apt-get >/dev/null 2>&1; then
  echo "Debian packages missing (${groups[*]}): ${pkgs[*]}; run as root on Debian, or: sudo apt-get update && sudo apt-get install -y ${pkgs[*]}" >&2
  exit 1
fi
echo "installing Debian packages (${groups[*]}): ${pkgs[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
# Packages whose postinst enables their services and, when systemd is PID 1,
# starts them (deb-systemd-invoke), each with the units that must never run
# on this machine: tuned would apply a profile to its sysctls; openvpn's
# openvpn.service (enabled by its postinst) has openvpn-generator start every
# /etc/openvpn/*.conf; NetworkManager
# (network-manager's postinst enables NetworkManager.service,
# NetworkManager-wait-online.service and NetworkManager-dispatcher.service,
# and starts NetworkManager.service) would take over its network. A
# policy-rc.d that refuses every start (exit 101, which deb-systemd-invoke
# honours) keeps them stopped during the install, and the units are disabled
# right after: the tests only read their files and run their programs with
# options that start no daemon (NetworkManager --print-config).
declare -A no_start=(
  [tuned]="tuned.service"
  [openvpn]="openvpn.service"
  [network-manager]="NetworkManager.service NetworkManager-wait-online.service NetworkManager-dispatcher.service"
)
guarded=()
for p in "${pkgs[@]}"; do
  [ -n "${no_start[$p]+x}" ] && guarded+=("$p")
done
if [ ${#guarded[@]} -gt 0 ] && [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get update
apt-get install -y "${pkgs[@]}"
for p in ${guarded[@]+"${guarded[@]}"}; do
  for unit in ${no_start[$p]}; do
    systemctl disable "$unit" >/dev/null 2>&1 || deb-systemd-helper disable "$unit" || true
  done
done
