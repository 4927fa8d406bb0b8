#!/bin/bash
# Debian 13 (trixie) as it comes: nothing planted. The point of this scenario
# is the facts: on trixie ansible-core 2.19 reads /etc/debian_version through
# its bundled distro 1.9, so distribution_version is "13.x", not "13".
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
test -s "$root/etc/debian_version"
