#!/usr/bin/env bash
# Issue 48's one command: every benchmark of its table, kiln (cuda:0 and
# NVIDIA's OpenCL) beside its peers (PyTorch, CuPy, CUB from bench/ref) in
# the same run, each kiln result verified by its bench program, then one
# table of ratios (op, kiln cuda:0, NVIDIA OpenCL, peers, ratio, goal,
# met/miss) and the size sweep 2^10 .. 2^28 (axpy, sum, dot, scan, sort,
# copy_if, take, histogram, random: kiln cuda:0 against torch and CuPy,
# device and wall time; a PNG chart when matplotlib is importable).
#
#   scripts/gpu-bench-all.sh --build   configure + build the bench targets
#                                      (Release) and the CUB references with
#                                      nvcc: a command of its own (< 10 min)
#   scripts/gpu-bench-all.sh           run (from the built tree): <= 9 min
#
# On the GPU machine, from the repository root, as root (NVIDIA's OpenCL is
# registered in /etc/OpenCL/vendors/nvidia.icd first, as gpu-test.sh does).
# BUILD_DIR (default build-gpu): bench/bench_{algo,sort,select,toolkit,
# toolkit_b,random} and ref/cub_{sort,scan,select,reduce,histogram} in it.
# Output: ${OUT:-/tmp}/bench-all.md (the tables), bench-all-sweep.png (the
# chart), bench-all/ (each step's stdout .out, stderr .err, exit status .rc,
# seconds .secs, the peers' .json). Every step prints one line with its
# seconds and runs under `timeout`: its own limit, cut to what is left of
# BUDGET (default 530 s) less 25 s kept for the table (itself limited to 20 s); a step that would
# start with under 5 s left is skipped and named. Exit status: 1 when a
# kiln result was WRONG or a kiln bench crashed (printed loudly; the table
# still prints), 2 when a kiln step only timed out or was skipped, else 0.
# A missing peer (torch, CuPy, a CUB binary) or a missing NVIDIA OpenCL
# prints "absent" and the run goes on.
#
# TREE=<commit>: the tree named in the table where the copy has no .git.
# For a dry run elsewhere (no GPU): CUDA_DEV=pocl OCL_DEV=none SCALE=8
# (SCALE=k divides every size by 2^k; peers are absent without torch/cupy;
# PEERS_ALL_FAKE=1 puts host stand-ins in their place, to exercise the table).
set -u

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
cd "$ROOT" || exit 1
BUILD="${BUILD_DIR:-build-gpu}"
case "$BUILD" in /*) ;; *) BUILD="$ROOT/$BUILD" ;; esac
OUTD="${OUT:-/tmp}"
D="$OUTD/bench-all"
B="$BUILD/bench"
REF="$BUILD/ref"
CUDA_DEV="${CUDA_DEV:-cuda:0}"
OCL_DEV="${OCL_DEV:-nvidia}"
OCL_MATCH="${OCL_MATCH:-nvidia.*\\(opencl}"
SCALE="${SCALE:-0}"
BUDGET="${BUDGET:-530}"
RESERVE=25
TARGETS="${TARGETS:-bench_algo bench_sort bench_select bench_toolkit bench_toolkit_b bench_random}"
REFS="${REFS-cub_sort cub_scan cub_select cub_reduce cub_histogram}"
# ONLY=REGEX: run only the steps whose names match (egrep), e.g. the ones
# a full run left skipped: ONLY='^(tkb|random|cub_histogram)' (the
# others are marked skipped); TARGETS / REFS narrow --build the same way.
ONLY="${ONLY:-}"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
[ -d "$CUDA_HOME/bin" ] && PATH="$PATH:$CUDA_HOME/bin"

# --- NVIDIA's OpenCL: registered with the ICD loader (gpu-test.sh's way) ---
register_opencl() {
  local icd=/etc/OpenCL/vendors
  if [ -e /usr/lib/libnvidia-opencl.so.1 ] || ls /usr/lib*/x86_64-linux-gnu/libnvidia-opencl.so.1 >/dev/null 2>&1 \
     || ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; then
    if ! grep -qs libnvidia-opencl "$icd"/*.icd; then
      if mkdir -p "$icd" 2>/dev/null && echo "libnvidia-opencl.so.1" > "$icd/nvidia.icd" 2>/dev/null; then
        echo "registered libnvidia-opencl.so.1 in $icd/nvidia.icd"
      else
        echo "cannot write $icd/nvidia.icd (not root?): NVIDIA OpenCL may be absent"
      fi
    fi
    if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
      export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    fi
  else
    echo "libnvidia-opencl.so.1 not found: NVIDIA OpenCL will be absent"
  fi
}

# --- --build ---------------------------------------------------------------
if [ "${1:-}" = --build ]; then
  register_opencl
  mkdir -p "$REF"
  LOG="$BUILD/bench-all-build.log"
  : > "$LOG"
  JOBS="$(nproc 2>/dev/null || echo 4)"
  t0=$SECONDS
  # the CUB references first, in the background: nvcc takes minutes each
  # (once over 8 for cub_sort), bounded so the command ends in time
  ARCH="${NVCC_ARCH:-native}"
  if command -v nvcc >/dev/null; then
    for r in $REFS; do
      ( timeout "${NVCC_TIMEOUT:-500}" nvcc -O3 -std=c++17 -arch="$ARCH" -o "$REF/$r" "bench/ref/$r.cu" \
          > "$REF/$r.log" 2>&1 || { rm -f "$REF/$r"; echo "nvcc $r FAILED (see $REF/$r.log)"; tail -5 "$REF/$r.log"; } ) &
    done
  else
    echo "nvcc not found: the CUB references will be absent"
  fi
  # shellcheck disable=SC2086 # TARGETS is a list
  if cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release >>"$LOG" 2>&1 &&
     cmake --build "$BUILD" -j "$JOBS" --target $TARGETS >>"$LOG" 2>&1; then
    echo "kiln bench targets built in $BUILD ($((SECONDS - t0)) s): $TARGETS"
  else
    echo "kiln build FAILED (see $LOG)"; tail -30 "$LOG"
    wait
    exit 1
  fi
  wait
  for r in $REFS; do [ -x "$REF/$r" ] && echo "built $REF/$r"; done
  echo "build took $((SECONDS - t0)) s"
  exit 0
fi

# --- run ---------------------------------------------------------------------
register_opencl
mkdir -p "$D"
rm -f "$D"/*.out "$D"/*.err "$D"/*.rc "$D"/*.secs "$D"/*.json "$D"/*.txt
START=$SECONDS
FAILED=0
sz() { echo $(( $1 >> SCALE )); }
N28=$(sz 268435456); N26=$(sz 67108864)
MATRIX=$(( 16384 >> (SCALE / 2) ))

# step NAME LIMIT_S COMMAND...: runs COMMAND under timeout (its limit cut to
# the budget left), stdout to NAME.out, stderr to NAME.err; one line each.
step() {
  local name=$1 lim=$2; shift 2
  local left=$(( BUDGET - RESERVE - (SECONDS - START) ))
  echo "$name" >> "$D/order.txt"
  if [ -n "$ONLY" ] && ! printf '%s\n' "$name" | grep -qE "$ONLY"; then
    echo skipped > "$D/$name.rc"
    return 0
  fi
  if [ "$left" -lt 5 ]; then
    echo skipped > "$D/$name.rc"
    printf '== %-26s skipped (budget: %d s left)\n' "$name" "$left"
    return 0
  fi
  [ "$lim" -gt "$left" ] && lim=$left
  local t0 t1 rc
  t0=$(date +%s.%N)
  timeout -k 5 "$lim" "$@" > "$D/$name.out" 2> "$D/$name.err"
  rc=$?
  t1=$(date +%s.%N)
  echo "$rc" > "$D/$name.rc"
  awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", b - a }' > "$D/$name.secs"
  local what="ok"
  case $rc in
    0) ;;
    124|137) what="TIMED OUT at $lim s" ;;
    *) what="exit $rc" ;;
  esac
  if grep -aqiE "\bWRONG\b|wrong result" "$D/$name.out" "$D/$name.err" 2>/dev/null; then
    what="$what, WRONG RESULT"
  fi
  printf '== %-26s %6s s  %s (limit %d s, %d s used of %d)\n' "$name" "$(cat "$D/$name.secs")" \
    "$what" "$lim" $(( SECONDS - START )) "$BUDGET"
  if [ "$what" != ok ]; then
    grep -aiE "WRONG|error|FAILED" "$D/$name.out" "$D/$name.err" 2>/dev/null | head -5 | sed 's/^/   /'
  fi
  return 0
}
# kiln DEV NAME LIMIT BIN ARGS...: a kiln bench on one device; "absent"
# when the binary or (for OpenCL) the device is missing
kiln() {
  local dev=$1 name=$2 lim=$3 bin=$4; shift 4
  if [ ! -x "$B/$bin" ]; then
    echo absent > "$D/$name.rc"; echo "$name" >> "$D/order.txt"
    printf '== %-26s absent (no %s: run --build)\n' "$name" "$B/$bin"
    FAILED=1
    return
  fi
  if [ "$dev" = "$OCL_DEV" ] && [ "$OCL_OK" != 1 ]; then
    echo absent > "$D/$name.rc"; echo "$name" >> "$D/order.txt"
    printf '== %-26s absent (no NVIDIA OpenCL)\n' "$name"
    return
  fi
  step "$name" "$lim" env KILN_DEVICE="$dev" "$B/$bin" "$@"
}
cub() {
  local name=$1 lim=$2; shift 2
  if [ ! -x "$REF/$name" ]; then
    echo absent > "$D/$name.rc"; echo "$name" >> "$D/order.txt"
    printf '== %-26s absent (no %s: run --build)\n' "$name" "$REF/$name"
    return
  fi
  step "$name" "$lim" "$REF/$name" "$@"
}
peers() {
  local name=$1 lim=$2; shift 2
  step "$name" "$lim" python3 bench/peers_all.py peers "$@" --json "$D/$name.json"
}

{
  echo "card: $(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)"
  echo "driver: $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
  echo "date: $(date -u +%Y-%m-%dT%H:%MZ)"
  echo "tree: ${TREE:-$(git -C "$ROOT" rev-parse --short HEAD 2>/dev/null || echo unknown)}"
  echo "nvcc: $(nvcc --version 2>/dev/null | tail -1)"
  echo "scale: $SCALE"
} > "$D/meta.txt"
grep -E "^(card|tree)" "$D/meta.txt"

# Does NVIDIA's OpenCL give kiln a device? (the probe's output says which)
OCL_OK=0
if [ "$OCL_DEV" != none ] && [ -x "$B/bench_algo" ]; then
  step probe.opencl 30 env KILN_DEVICE="$OCL_DEV" KILN_BENCH_OPS=sum "$B/bench_algo" 1024
  if grep "^device:" "$D/probe.opencl.out" 2>/dev/null | grep -qiE "$OCL_MATCH"; then
    OCL_OK=1
    echo "present: $(grep "^device:" "$D/probe.opencl.out")" > "$D/opencl.txt"
  fi
fi
[ $OCL_OK = 1 ] || echo "absent (KILN_DEVICE=$OCL_DEV found no device matching /$OCL_MATCH/)" > "$D/opencl.txt"
echo "NVIDIA OpenCL: $(cat "$D/opencl.txt")"

# --- the table: per topic, kiln cuda:0, kiln OpenCL, then the peers -------
# algo: copy, axpy, sum, dot, int32 scan at 2^28 (the warm-ups and the last
# timed run verified: bench_algo.c says why)
kiln "$CUDA_DEV" algo.cuda0 60 bench_algo "$N28"
kiln "$OCL_DEV" algo.nvidia 60 bench_algo "$N28"
peers algo.peers 60 algo --sizes "$N28"
cub cub_scan 30 "$N28"
cub cub_reduce 30 "$N28"
# sort: int32 keys, argsort int32 -> int64, int64 keys (n/2)
kiln "$CUDA_DEV" sort.cuda0 60 bench_sort "$N28"
kiln "$OCL_DEV" sort.nvidia 60 bench_sort "$N28"
peers sort.peers 45 sort --sizes "$N28"
cub cub_sort 60 "$N28"
# copy_if f32 x > 0.5 (every run verified)
KILN_BENCH_OPS=copy_if_f32 kiln "$CUDA_DEV" select.cuda0 40 bench_select "$N28"
KILN_BENCH_OPS=copy_if_f32 kiln "$OCL_DEV" select.nvidia 40 bench_select "$N28"
peers select.peers 30 select --sizes "$N28"
cub cub_select 30 "$N28"
# take with random int64 indices (KILN_BENCH_QUICK: the last timed run
# verified, every output overwritten before each run)
KILN_BENCH_OPS=take KILN_BENCH_QUICK=1 kiln "$CUDA_DEV" take.cuda0 45 bench_toolkit "$N28"
KILN_BENCH_OPS=take KILN_BENCH_QUICK=1 kiln "$OCL_DEV" take.nvidia 45 bench_toolkit "$N28"
peers take.peers 30 take --sizes "$N28"
# axis-0 sum of 16384^2, histograms of 2^28 (a 64-key hash table: unused)
kiln "$CUDA_DEV" tkb.cuda0 60 bench_toolkit_b "$MATRIX" "$MATRIX" "$N28" 64
kiln "$OCL_DEV" tkb.nvidia 60 bench_toolkit_b "$MATRIX" "$MATRIX" "$N28" 64
peers tkb.peers 40 tkb --sizes "$N28"
cub cub_histogram 30 "$N28"
# random uniform / normal and the fill floor at 2^26
KILN_BENCH_VERIFY=last kiln "$CUDA_DEV" random.cuda0 30 bench_random "$N26"
KILN_BENCH_VERIFY=last kiln "$OCL_DEV" random.nvidia 30 bench_random "$N26"
peers random.peers 30 random --sizes "$N26"

# --- the sweep: cuda:0 against torch and CuPy, 2^10 .. 2^28 -----------------
SIZES=""
for e in 10 12 14 16 18 20 22 24 26 28; do SIZES="$SIZES,$(sz $((1 << e)))"; done
SIZES="${SIZES#,}"
KILN_BENCH_OPS=axpy,sum,dot,scan_int32 KILN_BENCH_VERIFY=last \
  kiln "$CUDA_DEV" sweep.algo 75 bench_algo --sweep "$N28"
peers sweep.torch 75 sweep --peers torch --sizes "$SIZES"
peers sweep.cupy 75 sweep --peers cupy --sizes "$SIZES"
# the binaries without a sweep mode, once per size up to 2^26 (their 2^28
# point is the table's run above)
for e in 10 12 14 16 18 20 22 24 26; do
  n=$(sz $((1 << e)))
  KILN_BENCH_OPS=sort_int32 kiln "$CUDA_DEV" "sweep.sort.$n" 20 bench_sort "$n"
  KILN_BENCH_OPS=copy_if_f32 kiln "$CUDA_DEV" "sweep.select.$n" 20 bench_select "$n"
  KILN_BENCH_OPS=take KILN_BENCH_QUICK=1 kiln "$CUDA_DEV" "sweep.take.$n" 20 bench_toolkit "$n"
  kiln "$CUDA_DEV" "sweep.tkb.$n" 20 bench_toolkit_b 64 64 "$n" 64
  KILN_BENCH_VERIFY=last kiln "$CUDA_DEV" "sweep.random.$n" 20 bench_random "$n"
done
# issue 48: "bench_random finishes at 2^28"
KILN_BENCH_VERIFY=last kiln "$CUDA_DEV" "sweep.random.$N28" 40 bench_random "$N28"

# --- the table -------------------------------------------------------------------
echo "== steps done in $((SECONDS - START)) s; the table:"
echo
timeout 20 python3 bench/peers_all.py table "$D" --md "$OUTD/bench-all.md" --chart "$OUTD/bench-all-sweep.png"
rc=$?
# the same table under the name bench/results/ keeps (the lead commits it)
LABEL="gpu-$(sed -n 's/^card: //p' "$D/meta.txt" | tr ' ' '-' | tr -cd 'A-Za-z0-9-')"
[ "$LABEL" = gpu- ] && LABEL=gpu-unnamed
cp "$OUTD/bench-all.md" "$OUTD/$LABEL-$(date -u +%Y-%m-%d)-bench-all.md" 2>/dev/null
echo
echo "== total $((SECONDS - START)) s; table in $OUTD/bench-all.md (and $LABEL-$(date -u +%Y-%m-%d)-bench-all.md), logs in $D"
[ $rc -eq 0 ] && [ $FAILED -ne 0 ] && rc=2
if [ $rc -eq 1 ]; then
  echo "*** KILN VERIFICATION FAILED: see the table's last lines and $D/*.err ***"
elif [ $rc -ne 0 ]; then
  echo "(incomplete: a kiln step timed out, was skipped or is absent: exit 2)"
  rc=2
fi
exit $rc
