#!/usr/bin/env bash
# Tuning sweep of the GPU column reduction (the axis-0 sum of a float32
# matrix, 16384^2 by default) over its knobs (KILN_AXIS_COLS_OCCUPANCY,
# KILN_AXIS_COLS_THREADS, KILN_AXIS_FUSED: src/algo/ops/array_axis.c),
# next to torch's m.sum(0) on the same GPU (bench/peers_all.py, when torch
# is there). Two interleaved rounds; bench_toolkit_b checks the warm-up and
# the last run of each configuration against a host reference.
#   scripts/gpu-axis-sweep.sh [side]
# Needs bench_toolkit_b built in ${BUILD_DIR:-build-gpu}. Output: one line
# per configuration and round, "<sum_axis0 ms> <% of copy> <knobs>", also
# in ${OUT:-/tmp}/axis-sweep.txt.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-build-gpu}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
SIDE="${1:-16384}"
LOG="${OUT:-/tmp}/axis-sweep.txt"
: > "$LOG"
export KILN_DEVICE="${KILN_DEVICE:-cuda:0}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-sweep-cache}"
CONFIGS=(
  ""
  "KILN_AXIS_FUSED=0"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=1024"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=2048"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=4096"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=8192"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=16384"
  "KILN_AXIS_COLS_OCCUPANCY=0 KILN_AXIS_COLS_THREADS=4096 KILN_AXIS_FUSED=0"
)
for round in 1 2; do
  for cfg in "${CONFIGS[@]}"; do
    line=$(env $cfg "$BUILD/bench/bench_toolkit_b" "$SIDE" "$SIDE" 65536 1024 2>&1 |
      awk '$1 == "sum_axis0" { print $2, $4 }')
    echo "${line:-FAILED} ${cfg:-defaults}" | tee -a "$LOG"
  done
  if python3 -c "import torch" 2>/dev/null; then
    J="${OUT:-/tmp}/axis-sweep-torch-$round.json"
    python3 "$ROOT/bench/peers_all.py" peers tkb --sizes 65536 --peers torch --json "$J" \
      >/dev/null 2>&1
    python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print('torch m.sum(0):', \
json.dumps(d['peers']['torch']['results'])[:300])" "$J" 2>&1 | tee -a "$LOG"
  fi
done
