#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_*.c) with clang, ASan and UBSan,
# and runs each for SECONDS (default 3) from its seeds in fuzz/corpus/<name>.
# New inputs go to a scratch corpus (BUILD/corpus), never into the tree;
# a crash, leak or sanitizer report fails the run and leaves its input in
# BUILD/findings/. `make test` runs it with 3 s per target; run it by hand
# with a longer time (e.g. scripts/fuzz.sh 600) to look deeper.
# Usage: scripts/fuzz.sh [SECONDS] [BUILD]   (BUILD default: build-fuzz)
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-3}
build=${2:-build-fuzz}
cc=${KILN_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null; then
  echo "fuzz: $cc not found; fuzzing skipped (scripts/setup-debian.sh test installs it)"
  exit 0
fi
CC=$cc cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Debug -DKILN_FUZZ=ON -DKILN_BUILD_TESTS=OFF \
  -DKILN_BUILD_EXAMPLES=OFF -DKILN_BUILD_BENCH=OFF >/dev/null
cmake --build "$build" -j "${JOBS:-$(nproc)}" >/dev/null
root=$(pwd)
build=$(cd "$build" && pwd)
# intercept_tls_get_addr=0: see the Makefile (LSan's tracer beside PoCL).
export ASAN_OPTIONS=intercept_tls_get_addr=0:${ASAN_OPTIONS:-}
export LSAN_OPTIONS=suppressions=$root/tests/lsan.supp:print_suppressions=0
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
mkdir -p "$build/findings"
fail=0
for src in fuzz/fuzz_*.c; do
  name=$(basename "$src" .c)
  short=${name#fuzz_}
  corpus=$build/corpus/$short
  mkdir -p "$corpus"
  log=$build/$name.log
  if (cd "$build/findings" && "$build/fuzz/$name" -max_total_time="$secs" -timeout=10 \
        -rss_limit_mb=4096 -print_final_stats=1 "$corpus" "$root/fuzz/corpus/$short") \
        >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    echo "fuzz: $short: $runs inputs in ${secs}s, no finding"
  else
    echo "fuzz: $short: FAILED (log: $log; inputs: $build/findings/)"
    grep -E 'ERROR|runtime error|SUMMARY' "$log" | head -5
    fail=1
  fi
done
rm -rf "/tmp/kiln-fuzz-cache-"* 2>/dev/null || true
exit $fail
