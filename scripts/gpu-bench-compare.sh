#!/usr/bin/env bash
# Speed of this tree against an older kiln tree on the GPU machine, for
# changes that must not cost speed (issue 42's 3%): builds only the
# benchmarks of both trees (Release, in parallel), then runs each step with
# bench/compare_trees.py, which alternates the two builds run by run and
# flips their order every round, and prints one table of medians and
# new/old ratios per step.
#
#   scripts/gpu-bench-compare.sh OLD_SOURCE_DIR      (from the repository root)
#
# Steps: bench_algo device time on cuda:0, NVIDIA's OpenCL and PoCL (the
# CPU), bench_algo --enqueue (host cost of a call) on cuda:0 and PoCL,
# bench_toolkit (take) and bench_toolkit_b (axis sums, histograms) on
# cuda:0. Each step runs rounds until its seconds are spent (STEP_SECONDS
# scales them, default 1). bench_algo verifies the last timed run of every
# run (KILN_BENCH_VERIFY=last); a failed run stops its step.
# Logs and tables: ${OUT:-/tmp}/bench-compare/. BUILD_ONLY=1: build, no
# runs; ONLY=REGEX: the steps whose names match (e.g. ONLY=pocl).
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
OLD="$(cd "$1" && pwd)"
LOGS="${OUT:-/tmp}/bench-compare"
SCALE="${STEP_SECONDS:-1}"
mkdir -p "$LOGS"
JOBS="$(nproc 2>/dev/null || echo 8)"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd; then
  echo "libnvidia-opencl.so.1" >/etc/OpenCL/vendors/nvidia.icd 2>/dev/null ||
    echo "cannot register NVIDIA's OpenCL (not root?)"
fi
if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
BENCHES="bench_algo bench_toolkit bench_toolkit_b"
build() { # tree source
  local b="$ROOT/build-cmp-$1"
  cmake -S "$2" -B "$b" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_EXAMPLES=OFF \
    >"$LOGS/configure-$1.log" 2>&1 &&
    cmake --build "$b" -j "$((JOBS / 2 > 0 ? JOBS / 2 : 1))" --target $BENCHES >"$LOGS/build-$1.log" 2>&1
}
t0=$(date +%s)
build old "$OLD" & po=$!
build new "$ROOT" & pn=$!
ok=1
wait $po || { echo "build of the old tree failed"; tail -20 "$LOGS/build-old.log"; ok=0; }
wait $pn || { echo "build of this tree failed"; tail -20 "$LOGS/build-new.log"; ok=0; }
[ $ok = 1 ] || exit 1
echo "built both trees in $(( $(date +%s) - t0 )) s"
[ -n "${BUILD_ONLY:-}" ] && exit 0
export KILN_BENCH_VERIFY=last
step() { # name device keys seconds bench args...
  local name=$1 dev=$2 keys=$3 secs=$4 bench=$5; shift 5
  [[ $name =~ ${ONLY:-.} ]] || return 0
  secs=$(python3 -c "print(int($secs * $SCALE))")
  echo "### $name (KILN_DEVICE=$dev, $bench $*)" | tee -a "$LOGS/summary.md"
  KILN_DEVICE=$dev timeout $((secs * 2 + 60)) python3 "$ROOT/bench/compare_trees.py" --rounds 200 \
    --seconds "$secs" --keys "$keys" -- "$ROOT/build-cmp-old/bench/$bench" \
    "$ROOT/build-cmp-new/bench/$bench" -- "$@" >"$LOGS/$name.txt" 2>&1 ||
    echo "FAILED: $name (see $LOGS/$name.txt)"
  tee -a "$LOGS/summary.md" <"$LOGS/$name.txt"
}
step algo.cuda0 cuda:0 RESULT 70 bench_algo 67108864
step enqueue.cuda0 cuda:0 ENQUEUE 40 bench_algo --enqueue
step algo.nvidia nvidia RESULT 50 bench_algo 67108864
step toolkit.cuda0 cuda:0 RESULT 50 bench_toolkit 16777216
step toolkit_b.cuda0 cuda:0 RESULT 50 bench_toolkit_b 4096 4096 16777216 4194304
step algo.pocl pocl RESULT 40 bench_algo 1048576
step enqueue.pocl pocl ENQUEUE 40 bench_algo --enqueue
echo "total $(( $(date +%s) - t0 )) s; tables in $LOGS/summary.md"
