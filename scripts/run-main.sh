#!/usr/bin/env bash
# The main job (make run): list the devices, then run the showcase.
set -euo pipefail
build=${1:-build}
"$build/kiln" devices
echo
"$build/examples/vadd"
echo
"$build/examples/polygon_mask"
