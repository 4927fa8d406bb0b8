#!/bin/bash
# The lab's faults, planted by the lab's own script: this scenario differs only
# in how they are fixed (--apply --root on the tree before it is imaged).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../lab/plant.sh" "$@"
