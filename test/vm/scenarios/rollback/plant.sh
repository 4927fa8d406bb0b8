#!/bin/bash
# The lab's faults, to be applied and then rolled back.
set -euo pipefail
exec bash "$(dirname "$0")/../lab/plant.sh" "$@"
