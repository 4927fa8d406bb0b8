#!/bin/bash
# The boot-scripts scenario's faults, converged with neutralise_scripts: true.
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../boot-scripts/plant.sh" "$@"
