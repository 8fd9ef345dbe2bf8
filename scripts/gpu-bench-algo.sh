#!/usr/bin/env bash
# GPU speed of kiln's algorithms (issue 4): axpy, float32 sum, dot and int32
# inclusive scan at 2^28 elements on cuda:0 and on NVIDIA's OpenCL, against
# CuPy on the same GPU and against each run's device-to-device copy.
#
#   scripts/gpu-bench-algo.sh [n]     (from the repository root, after
#                                      scripts/gpu-test.sh built the tree)
# Needs a built tree in ${BUILD_DIR:-build-gpu} (bench/bench_algo) and
# python3 with numpy and cupy (PyOpenCL/mako are not needed and are skipped).
# bench_algo exits non-zero on a wrong result. It runs with
# KILN_BENCH_VERIFY=last unless the environment says otherwise: the timed
# runs follow each other as the peers' do, and the warm-ups and the last
# timed run are verified (checking every 2^28 result on the host idles the
# GPU between runs, which alone made torch's own axpy 7% slower on an H100;
# bench/bench_algo.c). KILN_BENCH_VERIFY=all verifies every run.
# Prints one markdown table and writes it to ${OUT:-/tmp}/algo-gpu.md; the
# raw bench_algo output goes to ${OUT:-/tmp}/algo-gpu-raw.txt.
set -u

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-build-gpu}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUTDIR="${OUT:-/tmp}"
N="${1:-268435456}"
BENCH="$BUILD/bench/bench_algo"
mkdir -p "$OUTDIR"
export KILN_BENCH_VERIFY="${KILN_BENCH_VERIFY:-last}"
MD="$OUTDIR/algo-gpu.md"
RAW="$OUTDIR/algo-gpu-raw.txt"

if [ ! -x "$BENCH" ]; then
  echo "no $BENCH: build first (scripts/gpu-test.sh, or cmake --build $BUILD --target bench_algo)" >&2
  exit 1
fi
# NVIDIA's OpenCL library may live outside the loader's path (gpu-test.sh
# registers it in /etc/OpenCL/vendors).
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

nvidia-smi -L 2>/dev/null || true
# Which kiln devices exist: the OpenCL run is skipped when NVIDIA's OpenCL
# has no device here.
DEVICES="cuda:0"
if KILN_DEVICE=nvidia "$BENCH" 1024 2>/dev/null | grep "^device:" | grep -qi "nvidia.*(opencl"; then
  DEVICES="cuda:0,nvidia"
else
  echo "note: KILN_DEVICE=nvidia found no device or failed: OpenCL column skipped" >&2
fi

{
  echo "# kiln algorithms on the GPU, n = $N ($(date -u +%Y-%m-%dT%H:%MZ))"
  echo
  echo "Device-event timing (median of 11 after 2 warm-ups; kiln: KILN_BENCH_VERIFY=$KILN_BENCH_VERIFY)."
  echo "% of copy = bytes moved per second / that run's device-to-device copy (8n bytes in"
  echo "the copy; axpy moves 12n, sum 4n, dot 8n, scan 8n). Targets: axpy >= 90%, sum >= 95%,"
  echo "dot >= 90%, int32 scan >= 80%. ratio = CuPy ms / kiln cuda:0 ms (> 1: kiln faster)."
  echo
  python3 "$ROOT/bench/peers_algo.py" "$BENCH" "$N" --devices "$DEVICES" --peers cupy,torch 2>"$RAW"
  rc=$?
  echo
  echo "(peers_algo.py exit status $rc; bench_algo output in $RAW)"
} | tee "$MD"
grep -E "skipped|WRONG|Error|error" "$RAW" >&2 || true
echo "table written to $MD"
