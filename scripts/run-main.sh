#!/usr/bin/env bash
# The main job (make run): list the devices kiln finds, then run the
# showcase: the seeds' polygon mask and pairwise distances on the host and
# on every device, checked against serial C, with the speed-up table on
# stdout and pictures under ./out/ (mask-*.png, speedups.png).
#   scripts/run-main.sh [BUILD_DIR] [kiln demo options...]
# e.g. scripts/run-main.sh build --quick, or --device pocl --sizes 1024
set -euo pipefail
build=${1:-build}
[ $# -gt 0 ] && shift
"$build/kiln" devices
echo
"$build/kiln" demo --out out "$@"
