#!/bin/bash
# The lab's faults, planted by the lab's own script, with the agent's
# ExecStart naming its port (10250): offline that makes it a candidate, which
# only the image's first boot can judge. This scenario differs from `lab` in
# how they are fixed: --apply --root on the tree before it is imaged, then the
# first-boot unit that bake installs.
set -euo pipefail
root=${1:?usage: plant.sh ROOTFS}
bash "$(dirname "${BASH_SOURCE[0]}")/../lab/plant.sh" "$root"
unit="$root/etc/systemd/system/monitoring-agent.service"
sed -i 's|^ExecStart=/usr/bin/python3 /opt/monitoring-agent/agent.py$|ExecStart=/usr/bin/python3 /opt/monitoring-agent/agent.py --port 10250|' "$unit"
grep -qx 'ExecStart=/usr/bin/python3 /opt/monitoring-agent/agent.py --port 10250' "$unit" || { echo "plant: the agent's ExecStart was not rewritten" >&2; exit 1; }
