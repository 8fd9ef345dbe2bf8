#!/usr/bin/env bash
# NVIDIA's compute-sanitizer over kiln's device tests on cuda:0 (issue 13),
# sized for a 10-minute command on the GPU machine:
#   memcheck   every test that runs a device (out-of-bounds and misaligned
#              accesses, invalid frees, leaks of device memory at exit)
#   racecheck  and synccheck for the tests whose kernels use shared memory
#              (reductions, scans, the array ops built on them, user
#              kernels with local memory)
# The sanitizer slows kernels 10-100x: each run gets PER_TEST seconds
# (default 90) and the whole script stops starting new runs after BUDGET
# seconds (default 540); a run cut short is counted as "timeout", not as a
# pass. Prints one line per run and the counts; exits 1 if the sanitizer
# reported an error or a test failed.
#
#   scripts/compute-sanitizer.sh           (from the repository root)
# BUILD_DIR overrides the build dir (a plain build: ASan's shadow memory
# and the CUDA driver's address reservations do not mix). Logs go to
# ${OUT:-/tmp}/kiln-compute-sanitizer/.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-cs}"
LOGS="${OUT:-/tmp}/kiln-compute-sanitizer"
PER_TEST="${PER_TEST:-90}"
BUDGET="${BUDGET:-540}"
mkdir -p "$LOGS"
CS="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
if [ ! -x "$CS" ]; then
  echo "compute-sanitizer not found (CUDA toolkit's bin/)"; exit 1
fi
cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_BENCH=OFF \
  -DKILN_BUILD_EXAMPLES=OFF >"$LOGS/cmake.log" 2>&1 &&
  cmake --build "$BUILD" -j "$(nproc)" >"$LOGS/build.log" 2>&1 || {
  echo "build failed: $LOGS/build.log"; exit 1; }

# Shared-memory kernels first: they are the ones racecheck/synccheck need.
SHARED="test_reduce test_scan test_array test_backend_cuda test_offload"
MEMCHECK="test_reduce test_scan test_array test_elementwise test_random test_backend_cuda
  test_core_buffer test_core_program test_core_event test_bad_input test_offload
  test_float16 test_interop_cuda test_cross_context test_core_threads test_queue_failure"
# (test_kernel_fault is left out: its kernel faults on purpose.)
export KILN_TEST_DEVICES=cuda:0
export KILN_CACHE_DIR="$LOGS/cache"
start=$(date +%s)
declare -A count=()
fail=0
# A report with errors, read: leaks of kiln's pinned host caches (the
# staging pool and the user-event flag words, kept for the process's life
# and allocated in kiln__cu_pinned_alloc) and API errors the tests provoke
# on purpose (a kernel name that does not exist, a freed address asked
# about) are not defects; anything else is.
classify() {
  awk '
    /^========= Leaked/ { leak = 1; leaks++; next }
    leak && /kiln__cu_pinned_alloc/ { cache++; leak = 0; next }
    /^=========     / { next }
    /^========= (LEAK SUMMARY|ERROR SUMMARY|COMPUTE-SANITIZER)/ { leak = 0; next }
    /^========= Program hit/ { api++; leak = 0; next }
    /^========= [A-Z]/ { other++; leak = 0 }
    END {
      bad = other + leaks - cache
      if (bad == 0) printf "clean (%d pinned-cache leaks, %d API errors returned to the test)", cache, api
      else printf "SANITIZER ERRORS (%d hazards, %d other leaks)", other, leaks - cache
    }' "$1"
}
run() { # tool test
  local tool=$1 t=$2 bin="$BUILD/tests/$2" log="$LOGS/$1-$2.log"
  if [ ! -x "$bin" ]; then return; fi
  if [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
    echo "$tool $t: not run (budget of ${BUDGET}s spent)"; count[notrun]=$(( ${count[notrun]:-0} + 1 )); return
  fi
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  timeout -k 5 "$PER_TEST" "$CS" --tool "$tool" "${extra[@]}" --error-exitcode 99 \
    --target-processes all "$bin" >"$log" 2>&1
  local rc=$? what
  case $rc in
    0) what=clean ;;
    77) what=skipped ;;
    99) what="$(classify "$log")"; case $what in clean*) ;; *) fail=1 ;; esac ;;
    124|137) what=timeout ;;
    *) what="TEST FAILED (rc $rc)"; fail=1 ;;
  esac
  echo "$tool $t: $what"
  count["$tool $what"]=$(( ${count["$tool $what"]:-0} + 1 ))
}
# memcheck first: it covers every test, and a short budget should spend
# itself there before the slower race and sync checks.
for t in $MEMCHECK; do run memcheck "$t"; done
for t in $SHARED; do run racecheck "$t"; run synccheck "$t"; done
echo "== counts (logs in $LOGS)"
for k in "${!count[@]}"; do echo "  $k: ${count[$k]}"; done | sort
exit $fail
