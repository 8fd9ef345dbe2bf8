#!/usr/bin/env bash
# The radix sort's knobs on a GPU machine, int32 keys / argsort (int64
# indices) / int64 keys at 2^28 (2^27 int64) by default: the CUDA onesweep
# pass's minimum blocks a multiprocessor (KILN_SORT_OS_MINB; default -1 =
# 3 for 4-byte keys alone) and keys a thread (KILN_SORT_OS_ITEMS) on
# cuda:0, and NVIDIA's OpenCL with its OpenCL C onesweep against the
# portable tile variant (KILN_SORT_OCL_ONESWEEP=0); then one traced run a
# device (KILN_TRACE + scripts/trace-summary.py: each kernel's time).
# Every configuration's first and last runs are verified by bench_sort (a
# wrong sort fails the line). For the issue's peer table use
# scripts/gpu-bench-toolkit.sh.
#   scripts/gpu-sort-sweep.sh [n]
# Needs a built tree in ${BUILD_DIR:-build-gpu} (scripts/gpu-test.sh makes
# one). Output: "<device> <knobs>: <op> <ms> ..." lines, also in
# ${OUT:-/tmp}/sort-sweep.txt.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-build-gpu}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
N="${1:-268435456}"
LOG="${OUT:-/tmp}/sort-sweep.txt"
: > "$LOG"
if [ -e /usr/lib/libnvidia-opencl.so.1 ] && ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
export KILN_BENCH_OPS="${KILN_BENCH_OPS:-sort_int32,argsort_int32,sort_int64}"
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-sweep-cache}"

one() { # device, then knobs as VAR=value words
  local dev=$1 out
  shift
  out="$(env "$@" KILN_DEVICE="$dev" timeout "${STEP_TIMEOUT:-120}" "$BUILD/bench/bench_sort" "$N" 2>&1)" ||
    { echo "$dev $*: FAILED $(echo "$out" | tail -2 | tr '\n' ' ')" | tee -a "$LOG"; return; }
  echo "$dev ${*:-(defaults)}: $(echo "$out" | awk '$1=="RESULT"{printf "%s %.3f  ", $2, $3 * 1e3}')" | tee -a "$LOG"
}

one cuda:0
for m in 0 2 4; do one cuda:0 KILN_SORT_OS_MINB=$m; done
for i in 16 20 28; do one cuda:0 KILN_SORT_OS_ITEMS=$i; done
one cuda:0 KILN_SORT_OS_ITEMS=16 KILN_SORT_OS_MINB=4
one nvidia
one nvidia KILN_SORT_OCL_ONESWEEP=0

# where the time goes: each kernel's device time, int32 keys
for dev in cuda:0 nvidia; do
  t="${OUT:-/tmp}/sort-trace-${dev//:/}.json"
  KILN_TRACE="$t" KILN_DEVICE="$dev" KILN_BENCH_OPS=sort_int32 timeout "${STEP_TIMEOUT:-120}" \
    "$BUILD/bench/bench_sort" "$N" >/dev/null 2>&1 &&
    { echo "== $dev, sort_int32, per kernel"; python3 "$ROOT/scripts/trace-summary.py" "$t"; } | tee -a "$LOG"
done
