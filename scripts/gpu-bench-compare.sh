#!/usr/bin/env bash
# Interleaved speed comparison of this tree against an older kiln tree on a
# GPU machine (for refactors that must not cost speed): builds both
# (Release), then runs, alternating old/new, bench_algo at 2^28 on cuda:0
# and NVIDIA's OpenCL, bench_launch_cuda and bench_launch (NVIDIA OpenCL).
#
#   scripts/gpu-bench-compare.sh OLD_SOURCE_DIR [ROUNDS]   (default 2 rounds)
#
# bench_algo verifies every run. Raw logs go to ${OUT:-/tmp}/bench-compare/,
# and the last lines printed are one table of medians per tree.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD="$(cd "$1" && pwd)"
ROUNDS="${2:-2}"
N=268435456
LOGS="${OUT:-/tmp}/bench-compare"
mkdir -p "$LOGS"
JOBS="$(nproc 2>/dev/null || echo 8)"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
for t in old new; do
  src="$ROOT"; [ $t = old ] && src="$OLD"
  b="$ROOT/build-bench-$t"
  tests=OFF; [ $t = new ] && tests=ON  # the new tree's tests are there to run by hand
  cmake -S "$src" -B "$b" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=$tests >"$LOGS/configure-$t.log" 2>&1 &&
    cmake --build "$b" -j "$JOBS" >"$LOGS/build-$t.log" 2>&1 || { echo "build of $t failed"; tail -20 "$LOGS/build-$t.log"; exit 1; }
done
run() { # tree name command...
  local t=$1 name=$2; shift 2
  echo "### $t $name" >>"$LOGS/$t.log"
  ( cd "$ROOT/build-bench-$t" && "$@" ) >>"$LOGS/$t.log" 2>&1 || echo "FAILED: $t $name" | tee -a "$LOGS/$t.log"
}
[ -n "${BUILD_ONLY:-}" ] && exit 0
for r in $(seq 1 "$ROUNDS"); do
  for t in old new; do
    run $t algo-cuda env KILN_DEVICE=cuda:0 bench/bench_algo $N
    run $t algo-ocl env KILN_DEVICE=nvidia bench/bench_algo $N
    run $t launch-cuda bench/bench_launch_cuda
    run $t launch-ocl env KILN_DEVICE=nvidia bench/bench_launch
  done
done
for t in old new; do
  echo "== $t ($( [ $t = old ] && echo "$OLD" || echo this tree ))"
  grep -aE "^### |^RESULT|ratio kiln/raw|^device:" "$LOGS/$t.log" | grep -v "^device" | head -80
done
