#!/usr/bin/env bash
# The toolkit's benchmarks on a GPU machine, each with its peers in the same
# run (torch / CuPy where importable, CUB for the sort): sort, selection,
# take/put/astype/where, axis sums / histogram / hash table, matmul / FFT,
# random numbers, and the pipeline example. kiln runs on cuda:0 and on
# NVIDIA's OpenCL. Sizes are the issues' (2^28 elements unless noted).
#
#   scripts/gpu-bench-toolkit.sh [QUICK]    (QUICK=1: 2^24, for a dry run)
# Tables go to ${OUT:-/tmp}/bench-toolkit/*.md (one file per benchmark),
# each command's log to bench-toolkit/logs.txt.
# STEP_TIMEOUT: seconds per benchmark (default 300).
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OUTDIR="${OUT:-/tmp}/bench-toolkit"
BUILD="${BUILD_DIR:-$ROOT/build-bench}"
mkdir -p "$OUTDIR"
LOG="$OUTDIR/logs.txt"
: > "$LOG"
N=268435456
[ "${1:-}" = QUICK ] && N=16777216
if [ -e /usr/lib/libnvidia-opencl.so.1 ] && ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd; then
  mkdir -p /etc/OpenCL/vendors && echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd
fi
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF >>"$LOG" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" >>"$LOG" 2>&1 || { echo "build failed"; tail -30 "$LOG"; exit 1; }
B="$BUILD/bench"
step() { # name command...
  local name=$1; shift
  echo "### $name: $*" >>"$LOG"
  ( cd "$ROOT" && timeout "${STEP_TIMEOUT:-300}" "$@" ) >"$OUTDIR/$name.md" 2>>"$LOG" || echo "FAILED (or timed out): $name" | tee -a "$LOG"
  echo "== $name"; grep -E "^\||RESULT|PEER|CUB" "$OUTDIR/$name.md" | head -24
}
DEVS=cuda:0,nvidia
[ -x "$B/bench_sort" ] && step sort python3 bench/peers_sort.py "$B/bench_sort" $N --devices $DEVS
if [ -f bench/ref/cub_sort.cu ] && command -v nvcc >/dev/null; then
  # (nvcc took over 8 minutes for it once: bounded, so the rest still runs)
  timeout "${NVCC_TIMEOUT:-240}" nvcc -O3 -arch=native -o "$BUILD/cub_sort" bench/ref/cub_sort.cu >>"$LOG" 2>&1 &&
    step cub_sort "$BUILD/cub_sort" $N
fi
[ -x "$B/bench_select" ] && step select python3 bench/peers_select.py "$B/bench_select" $N --devices $DEVS
# the last timed run and the warm-ups verified (outputs overwritten before
# every run): checking all eleven took minutes at 2^28
[ -x "$B/bench_toolkit" ] && KILN_BENCH_QUICK=1 step toolkit python3 bench/peers_toolkit.py "$B/bench_toolkit" $N --devices $DEVS
if [ -x "$B/bench_toolkit_b" ]; then
  R=16384; [ $N -lt 268435456 ] && R=4096
  KILN_DEVICE=cuda:0 step toolkit_b python3 bench/peers_toolkit_b.py "$B/bench_toolkit_b" $R $R $N $((N / 4))
fi
[ -x "$B/bench_linalg" ] && [ -f bench/peers_linalg.py ] && step linalg python3 bench/peers_linalg.py "$B/bench_linalg"
[ -x "$B/bench_random" ] && step random bash -c "KILN_DEVICE=cuda:0 '$B/bench_random' $N; \
  KILN_DEVICE=nvidia '$B/bench_random' $N; python3 bench/peers_random.py $N"
