#!/usr/bin/env bash
# Tuning sweep of the CUDA single-pass scan (int32 inclusive cumsum, 2^28 by
# default) over its knobs (KILN_SCAN_THREADS/ITEMS/MINB/SLEEP/PRE/EVERY,
# see src/algo/prim/scan.c), next to CUB's DeviceScan on the same GPU
# (bench/ref/cub_scan.cu, when nvcc is there). Exploratory: it verifies only
# the warm-up runs (KILN_BENCH_QUICK); report figures from
# scripts/gpu-bench-algo.sh, which verifies every run.
#   scripts/gpu-scan-sweep.sh [n] [stage...]   stages: ref shape delay
#                                               (delay2, select, wide: on demand)
# Needs a built tree in ${BUILD_DIR:-build-gpu}. Output: one line per
# configuration, "<ms> <% of copy> <knobs>", also in ${OUT:-/tmp}/scan-sweep.txt.
# The select stage times the selections, which run on the same template
# with kept values (bench_select: copy_if of float32, unique of int32), as
# "<copy_if ms> <unique ms> <knobs>" lines in ${OUT:-/tmp}/select-sweep.txt.
# The wide stage sweeps the 8-byte scans (16-byte status words: int64
# cumsum, unique with counts) around the defaults of 2026-11-28 (16 items,
# 4 blocks an SM) as "<int64 scan ms> <% of copy> <unique+counts ms> <knobs>"
# lines in ${OUT:-/tmp}/wide-sweep.txt.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-build-gpu}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
N="${1:-268435456}"
shift || true
STAGES="${*:-ref shape delay}"
LOG="${OUT:-/tmp}/scan-sweep.txt"
: > "$LOG"
export KILN_DEVICE="${KILN_DEVICE:-cuda:0}" KILN_BENCH_OPS=scan_int32 KILN_BENCH_QUICK=1
export KILN_CACHE_DIR="${KILN_CACHE_DIR:-/tmp/kiln-sweep-cache}"

one() { # knobs as VAR=value words; prints "<ms> <pct> <knobs>"
  local out
  out="$(env "$@" "$BUILD/bench/bench_algo" "$N" 2>&1)" || { echo "FAILED $* : $(echo "$out" | tail -2)" | tee -a "$LOG"; return; }
  echo "$out" | awk -v k="$*" '$1=="scan_int32"{printf "%s %s %s\n", $2, $5, k}' | tee -a "$LOG"
}
best() { grep -v -e FAILED -e "^#" "$LOG" | sort -n | head -1 | cut -d' ' -f3-; }
one_sel() { # as one, for bench_select: "<copy_if ms> <unique ms> <knobs>"
  local out
  out="$(env "$@" KILN_BENCH_OPS=copy_if_f32,unique_i32 "$BUILD/bench/bench_select" "$N" 2>&1)" ||
    { echo "FAILED $* : $(echo "$out" | tail -2)" | tee -a "${OUT:-/tmp}/select-sweep.txt"; return; }
  echo "$out" | awk -v k="$*" '$1=="copy_if_f32"{c=$2} $1=="unique_i32"{u=$2}
    END{printf "%s %s %s\n", c, u, k}' | tee -a "${OUT:-/tmp}/select-sweep.txt"
}
one_wide() { # as one, for the 8-byte scans
  local a u
  a="$(env "$@" KILN_BENCH_OPS=scan_int64 "$BUILD/bench/bench_algo" "$N" 2>&1)" ||
    { echo "FAILED $* : $(echo "$a" | tail -2)" | tee -a "${OUT:-/tmp}/wide-sweep.txt"; return; }
  u="$(env "$@" KILN_BENCH_OPS=unique_counts_i32 "$BUILD/bench/bench_select" "$N" 2>&1)" ||
    { echo "FAILED $* : $(echo "$u" | tail -2)" | tee -a "${OUT:-/tmp}/wide-sweep.txt"; return; }
  printf "%s %s %s\n" "$(echo "$a" | awk '$1=="scan_int64"{printf "%s %s", $2, $5}')" \
    "$(echo "$u" | awk '$1=="unique_counts_i32"{print $2}')" "$*" | tee -a "${OUT:-/tmp}/wide-sweep.txt"
}

for stage in $STAGES; do
  case "$stage" in
  ref)
    if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then
      NVCC="$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)"
      "$NVCC" -O3 -arch=native -o /tmp/cub_scan "$ROOT/bench/ref/cub_scan.cu" && /tmp/cub_scan "$N" | tee -a "$LOG.ref"
    fi ;;
  shape)
    one KILN_SCAN_THREADS=256 KILN_SCAN_ITEMS=24 KILN_SCAN_MINB=6
    for t in 128 192; do for i in 16 20 24 28 32; do for m in 8 12; do
      [ $((t * m)) -le 2048 ] || continue
      one KILN_SCAN_THREADS=$t KILN_SCAN_ITEMS=$i KILN_SCAN_MINB=$m
    done; done; done
    for i in 16 20 28 32; do one KILN_SCAN_THREADS=256 KILN_SCAN_ITEMS=$i KILN_SCAN_MINB=6; done
    one KILN_SCAN_THREADS=384 KILN_SCAN_ITEMS=20 KILN_SCAN_MINB=4
    one KILN_SCAN_THREADS=512 KILN_SCAN_ITEMS=16 KILN_SCAN_MINB=3 ;;
  delay)
    B="$(best)"; echo "# delay stage on: $B" | tee -a "$LOG"
    for s in 0 50 200 400 650; do one $B KILN_SCAN_SLEEP=$s; done
    for p in 300 650 1200; do for s in 100 650; do for e in 0 1; do
      one $B KILN_SCAN_PRE=$p KILN_SCAN_SLEEP=$s KILN_SCAN_EVERY=$e
    done; done; done ;;
  delay2) # around the defaults: longer sleeps, and other shapes with them
    for p in 800 1200 2000 3000; do for s in 650 1000 1500; do
      one KILN_SCAN_PRE=$p KILN_SCAN_SLEEP=$s KILN_SCAN_EVERY=1
    done; done
    for shape in "128 24 12" "128 32 8" "192 24 8" "256 20 6" "256 28 6" "384 20 4"; do
      set -- $shape
      one KILN_SCAN_THREADS=$1 KILN_SCAN_ITEMS=$2 KILN_SCAN_MINB=$3 KILN_SCAN_PRE=1200 KILN_SCAN_SLEEP=650 KILN_SCAN_EVERY=1
    done ;;
  select) # the look-back's pauses and the block shape with kept values
    : > "${OUT:-/tmp}/select-sweep.txt"
    one_sel; one_sel KILN_SCAN_KEEP=0
    for p in 0 300 600 1200; do for s in 100 300 650; do
      one_sel KILN_SCAN_PRE=$p KILN_SCAN_SLEEP=$s
    done; done
    for shape in "16 6" "20 5" "28 4"; do
      set -- $shape
      one_sel KILN_SCAN_ITEMS=$1 KILN_SCAN_MINB=$2
    done ;;
  wide) # 8-byte scans: block shape and pauses
    : > "${OUT:-/tmp}/wide-sweep.txt"
    one_wide
    for shape in "12 5" "16 5" "20 3" "20 4"; do
      set -- $shape
      one_wide KILN_SCAN_ITEMS=$1 KILN_SCAN_MINB=$2
    done
    for p in "800 400" "1600 800" "1200 650 0"; do
      set -- $p
      one_wide KILN_SCAN_PRE=$1 KILN_SCAN_SLEEP=$2 ${3:+KILN_SCAN_EVERY=$3}
    done ;;
  esac
done
echo "# best: $(grep -v FAILED "$LOG" | grep -v '^#' | sort -n | head -3 | tr '\n' ';')"
