#!/usr/bin/env bash
# Builds kiln and runs the whole test suite on a GPU machine, once per
# device kind: cuda:0 (the CUDA backend), nvidia (NVIDIA's OpenCL) and pocl
# (OpenCL on the CPU), then the launch benchmarks. Never stops at the first
# failure; prints passed/failed counts per device at the end.
#
#   scripts/gpu-test.sh            (from the repository root; run as root to
#                                   register NVIDIA's OpenCL library)
# Logs go to ${OUT:-/tmp}/kiln-gpu-test/. BUILD_DIR overrides the build dir.
set -u

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOGS="${OUT:-/tmp}/kiln-gpu-test"
BUILD="${BUILD_DIR:-$ROOT/build-gpu}"
JOBS="$(nproc 2>/dev/null || echo 4)"
# DEVICES: the device kinds to run the suite on (a subset fits the
# machine's 10-minute command limit better); CTEST_JOBS: tests at once.
DEVICES="${DEVICES:-cuda:0 nvidia pocl}"
CTEST_JOBS="${CTEST_JOBS:-4}"
LONG_TESTS="${LONG_TESTS:-test_fault_injection|test_soak}"
mkdir -p "$LOGS"
SUMMARY="$LOGS/summary.txt"
: > "$SUMMARY"

say() { echo "== $*" | tee -a "$SUMMARY"; }

# --- 1. register NVIDIA's OpenCL library with the ICD loader --------------
ICD_DIR=/etc/OpenCL/vendors
if [ -e /usr/lib/libnvidia-opencl.so.1 ] || ls /usr/lib*/x86_64-linux-gnu/libnvidia-opencl.so.1 >/dev/null 2>&1 \
   || ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1; then
  if ! grep -qs libnvidia-opencl "$ICD_DIR"/*.icd 2>/dev/null; then
    if mkdir -p "$ICD_DIR" 2>/dev/null && echo "libnvidia-opencl.so.1" > "$ICD_DIR/nvidia.icd" 2>/dev/null; then
      say "registered libnvidia-opencl.so.1 in $ICD_DIR/nvidia.icd"
    else
      say "cannot write $ICD_DIR/nvidia.icd (not root?): NVIDIA OpenCL may be missing"
    fi
  fi
  # The loader finds the library by soname; /usr/lib may not be on its path.
  if ! ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 && [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
    export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
else
  say "libnvidia-opencl.so.1 not found: the 'nvidia' OpenCL run will find no device"
fi

# --- 2. configure and build ------------------------------------------------
say "nvidia-smi"
nvidia-smi -L 2>&1 | tee -a "$SUMMARY" || true
say "configure + build in $BUILD (Release, -DKILN_WERROR=ON)"
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKILN_WERROR=ON \
      >"$LOGS/configure.log" 2>&1; then
  say "configure FAILED (see $LOGS/configure.log)"; tail -30 "$LOGS/configure.log"
fi
if ! cmake --build "$BUILD" -j "$JOBS" -- -k >"$LOGS/build.log" 2>&1; then
  say "build had errors (see $LOGS/build.log); retrying without -Werror"
  grep -E "error|warning" "$LOGS/build.log" | head -40 | tee -a "$SUMMARY"
  cmake -S "$ROOT" -B "$BUILD" -DKILN_WERROR=OFF >>"$LOGS/configure.log" 2>&1
  cmake --build "$BUILD" -j "$JOBS" -- -k >>"$LOGS/build.log" 2>&1 || say "build still failing: running what was built"
fi

# --- 3. devices ---------------------------------------------------------------
KILN="$BUILD/kiln"
[ -x "$KILN" ] || KILN="$(find "$BUILD" -maxdepth 3 -type f -name kiln -perm -u+x | head -1)"
say "kiln devices"
if [ -n "$KILN" ]; then "$KILN" devices 2>&1 | tee "$LOGS/devices.log" | tee -a "$SUMMARY"; else say "kiln CLI not built"; fi

# --- 4. the suite, once per device -------------------------------------------
declare -A PASSED FAILED SKIPPED
for dev in $DEVICES; do
  tag="${dev//:/}"
  say "ctest with KILN_TEST_DEVICES=$dev"
  # The long tests (LONG_TESTS) run after the rest, two at a time with a
  # longer watchdog: beside 16 other tests, NVIDIA's OpenCL compiler made
  # fault injection and the soak's warm-up outlast the 240 s one.
  ( cd "$BUILD" && export KILN_TEST_DEVICES="$dev" KILN_DEVICE="$dev"
    KILN_TEST_WATCHDOG="${KILN_TEST_WATCHDOG:-240}" \
      ctest -V -j"$CTEST_JOBS" --timeout 600 -E "^($LONG_TESTS)\$" >"$LOGS/ctest-$tag.log" 2>&1
    KILN_TEST_WATCHDOG="${KILN_TEST_WATCHDOG_LONG:-540}" \
      ctest -V -j2 --timeout 600 -R "^($LONG_TESTS)\$" >>"$LOGS/ctest-$tag.log" 2>&1 )
  # a test the watchdog stopped printed every thread's stack: name the
  # frames (addr2line) into ctest-<dev>-stacks.log
  if grep -aq "watchdog (KILN_TEST_WATCHDOG)" "$LOGS/ctest-$tag.log"; then
    grep -aE "watchdog|^([0-9]+: )?--- thread|\(\+0x[0-9a-f]+\)" "$LOGS/ctest-$tag.log" |
      while IFS= read -r l; do
        if [[ $l =~ ([^ ]+)\(\+(0x[0-9a-f]+)\) ]]; then
          echo "$l  $(addr2line -f -C -p -e "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" 2>/dev/null | head -1)"
        else echo "$l"; fi
      done > "$LOGS/ctest-$tag-stacks.log"
    say "$dev: a test hung; stacks in $LOGS/ctest-$tag-stacks.log"
  fi
  # ctest's own line: "NN% tests passed, F tests failed out of T", or
  # "100% tests passed out of T" when none failed
  # (one per ctest run: summed)
  lines="$(grep -aE "tests passed(, [0-9]+ tests failed)? out of" "$LOGS/ctest-$tag.log")"
  total=0 failed=0
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    total=$(( total + $(echo "$line" | sed -E 's/.*out of ([0-9]+).*/\1/') ))
    case "$line" in *"tests failed"*)
      failed=$(( failed + $(echo "$line" | sed -E 's/.* ([0-9]+) tests failed.*/\1/') )) ;; esac
  done <<< "$lines"
  if [ "$(echo "$lines" | grep -c .)" -lt 2 ]; then failed="?"; fi
  # a skipped test (exit 77) counts in ctest's "passed": count it apart
  skipped="$(grep -acE '^\s*[0-9]+ - .* \(Skipped\)$' "$LOGS/ctest-$tag.log")"
  PASSED[$dev]=$(( ${total:-0} - ${failed//\?/0} - skipped ))
  FAILED[$dev]="$failed"
  SKIPPED[$dev]="$skipped"
  grep -aE "^\s*[0-9]+/[0-9]+ Test .*(Failed|Timeout|Exception|\*\*\*)" "$LOGS/ctest-$tag.log" | tee -a "$SUMMARY"
  # check counts inside the programs ("N passed, N failed" lines)
  checks="$(grep -aE "^([0-9]+: )?[0-9]+ passed, [0-9]+ failed$" "$LOGS/ctest-$tag.log" |
            sed -E 's/^[0-9]+: //' |
            awk '{p+=$1; f+=$3} END {printf "%d checks passed, %d failed", p, f}')"
  say "$dev: ${PASSED[$dev]} tests passed, ${SKIPPED[$dev]} skipped, ${FAILED[$dev]} failed of ${total:-0}; $checks"
done

# --- 5. benchmarks --------------------------------------------------------------
if [ -x "$BUILD/bench/bench_launch_cuda" ]; then
  say "bench_launch_cuda"
  "$BUILD/bench/bench_launch_cuda" 2>&1 | tee "$LOGS/bench_launch_cuda.log" | tee -a "$SUMMARY"
fi
if [ -x "$BUILD/bench/bench_launch" ]; then
  say "bench_launch (KILN_DEVICE=nvidia)"
  KILN_DEVICE=nvidia "$BUILD/bench/bench_launch" 2>&1 | tee "$LOGS/bench_launch-nvidia.log" | tee -a "$SUMMARY"
fi

# --- 6. summary -----------------------------------------------------------------
echo
say "summary (logs in $LOGS)"
for dev in $DEVICES; do
  say "  $dev: ${PASSED[$dev]} passed, ${SKIPPED[$dev]} skipped, ${FAILED[$dev]} failed"
done
exit 0
