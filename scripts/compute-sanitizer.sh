#!/usr/bin/env bash
# NVIDIA's compute-sanitizer over kiln's device tests on cuda:0 (issues 13
# and 41), one tool per command so that each fits the GPU machine's
# 10-minute command limit:
#
#   scripts/compute-sanitizer.sh memcheck    every test that runs a device
#       (out-of-bounds and misaligned accesses, invalid frees, device
#       memory leaked at exit; about 60 programs); SHARD=1/3, 2/3, 3/3
#       split it into commands of a third each when one command ends with
#       tests "not run"
#   scripts/compute-sanitizer.sh racecheck   the tests of every kernel with
#   scripts/compute-sanitizer.sh synccheck   shared memory: the onesweep sort
#       passes and lookback (test_sort), scans (test_scan), selection
#       (test_select), histogram (test_histogram), hash table (test_hash),
#       axis reductions (test_axis), reductions (test_reduce, test_array),
#       BLAS/FFT glue (test_blas, test_fft), user kernels with local
#       memory (test_backend_cuda, test_offload)
#   scripts/compute-sanitizer.sh all         the three in a row (the old
#       behaviour; longer than 10 minutes)
#
# The sanitizer slows kernels 10-100x: each run gets PER_TEST seconds
# (default 90 for memcheck, 150 for racecheck/synccheck) and the script
# stops starting new runs after BUDGET seconds (default 480, leaving the
# build and the summary inside 10 minutes); a run cut short is counted as
# "timeout", a test not started as "not run", never as a pass. Prints one
# line per run and the counts per tool and verdict; exits 1 if the
# sanitizer reported an error or a test failed.
#
# BUILD_DIR overrides the build dir (a plain build: ASan's shadow memory
# and the CUDA driver's address reservations do not mix); an existing,
# configured one is built as it is (BUILD_DIR=build-gpu after
# gpu-test.sh: no second build). test_sort's racecheck needs more than
# 75 s on an H200. DRY_RUN=1 lists the runs over an existing build. Logs go to ${OUT:-/tmp}/kiln-compute-sanitizer/.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-cs}"
LOGS="${OUT:-/tmp}/kiln-compute-sanitizer"
MODE="${1:-all}"
case $MODE in memcheck|racecheck|synccheck|all) ;; *)
  echo "usage: $0 memcheck|racecheck|synccheck|all"; exit 2 ;; esac
if [ "$MODE" = memcheck ]; then PER_TEST="${PER_TEST:-90}"; else PER_TEST="${PER_TEST:-150}"; fi
BUDGET="${BUDGET:-480}"
SHARD="${SHARD:-1/1}"
mkdir -p "$LOGS"
CS="$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)"
# DRY_RUN=1: list the runs over an existing build, start nothing.
if [ -n "${DRY_RUN:-}" ]; then CS=/bin/true; fi
if [ ! -x "$CS" ]; then
  echo "compute-sanitizer not found (CUDA toolkit's bin/)"; exit 1
fi
echo "== compute-sanitizer $MODE (shard $SHARD) on cuda:0; build in $BUILD"
# A BUILD_DIR that is already configured (gpu-test.sh's build-gpu) is
# built as it is: reconfiguring its build type would rebuild everything.
if [ -z "${DRY_RUN:-}" ]; then
  configure=1
  if [ -n "${BUILD_DIR:-}" ] && [ -f "$BUILD/CMakeCache.txt" ]; then configure=0; fi
  if { [ $configure = 1 ] &&
       ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_BUILD_BENCH=OFF \
         -DKILN_BUILD_EXAMPLES=ON >"$LOGS/cmake.log" 2>&1; } ||
     ! cmake --build "$BUILD" -j "$(nproc)" >"$LOGS/build.log" 2>&1; then
    echo "build failed: $LOGS/build.log"; exit 1
  fi
fi

# The tests of the kernels with shared memory (racecheck, synccheck).
SHARED="test_sort test_scan test_select test_histogram test_hash test_axis test_reduce
  test_array test_blas test_fft test_backend_cuda test_offload"
# memcheck: every test program that runs device work (all of tests/ built
# here but those that run no kernel of kiln's), shared-memory ones first.
# test_kernel_fault is left out: its kernel faults on purpose.
LEFT_OUT=" test_kernel_fault test_harness test_cli test_install test_doc_claims test_mpi "
MEMCHECK="$SHARED"
for bin in "$BUILD"/tests/test_*; do
  t=$(basename "$bin")
  if [ ! -f "$bin" ] || [ ! -x "$bin" ]; then continue; fi
  case " $SHARED $LEFT_OUT " in *" $t "*) continue ;; esac
  MEMCHECK="$MEMCHECK $t"
done
# SHARD=k/n: every n-th test from the k-th
shard_of() {
  local k=${SHARD%/*} n=${SHARD#*/} i=0 out=""
  for t in $1; do i=$((i + 1)); [ $(( (i - 1) % n + 1 )) -eq "$k" ] && out="$out $t"; done
  echo "$out"
}
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
    /^========= Target application returned an error/ { leak = 0; next }
    /^========= Error: Target application terminated before first instrumented API call/ { none = 1; next }
    /^========= [A-Z]/ { other++; leak = 0 }
    END {
      bad = other + leaks - cache
      if (none) printf "no CUDA call to instrument"
      else if (bad == 0) printf "sanitizer clean (%d pinned-cache leaks, %d API errors returned to the test)", cache, api
      else printf "SANITIZER ERRORS (%d hazards, %d other leaks)", other, leaks - cache
    }' "$1"
}
run() { # tool test
  local tool=$1 t=$2 bin="$BUILD/tests/$2" log="$LOGS/$1-$2.log"
  if [ ! -x "$bin" ]; then return; fi
  if [ $(( $(date +%s) - start )) -ge "$BUDGET" ]; then
    echo "$tool $t: not run (budget of ${BUDGET}s spent)"; count[notrun]=$(( ${count[notrun]:-0} + 1 )); return
  fi
  if [ -n "${DRY_RUN:-}" ]; then
    echo "$tool $t: would run"; count["$tool would run"]=$(( ${count["$tool would run"]:-0} + 1 )); return
  fi
  local extra=()
  [ "$tool" = memcheck ] && extra=(--leak-check full)
  # No --error-exitcode: the exit status stays the test's own (0 passed,
  # 77 skipped on this device), and the report is read from the log.
  timeout -k 5 "$PER_TEST" "$CS" --tool "$tool" "${extra[@]}" \
    --target-processes all "$bin" >"$log" 2>&1
  local rc=$? what report
  report="$(classify "$log")"
  case $report in "no CUDA call"*) rc=none ;; esac
  case $rc in
    none) what="$report" ;;
    0) what="passed, $report" ;;
    77) what="skipped, $report" ;;
    124|137) what=timeout ;;
    *) what="TEST FAILED (rc $rc), $report"; fail=1 ;;
  esac
  case $what in *"SANITIZER ERRORS"*) fail=1 ;; esac
  echo "$tool $t: $what"
  # Counted by verdict: the per-program leak and API-error figures are in
  # the line above, not in the key (one count line per figure otherwise).
  local verdict="${what% (*}"
  count["$tool $verdict"]=$(( ${count["$tool $verdict"]:-0} + 1 ))
}
if [ "$MODE" = memcheck ] || [ "$MODE" = all ]; then
  for t in $(shard_of "$MEMCHECK"); do run memcheck "$t"; done
fi
for tool in racecheck synccheck; do
  if [ "$MODE" = "$tool" ] || [ "$MODE" = all ]; then
    for t in $(shard_of "$SHARED"); do run "$tool" "$t"; done
  fi
done
echo "== counts after $(( $(date +%s) - start )) s (logs in $LOGS)"
for k in "${!count[@]}"; do echo "  $k: ${count[$k]}"; done | sort
exit $fail
