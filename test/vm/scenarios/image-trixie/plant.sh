#!/bin/bash
# The image scenario's faults (the lab's, the agent's ExecStart naming 10250).
set -euo pipefail
exec bash "$(dirname "${BASH_SOURCE[0]}")/../image/plant.sh" "$@"
