#!/usr/bin/env bash
# Reruns named tests on one device of the GPU machine, in parallel, each
# with a short watchdog, and keeps one compact log per device: the FAIL
# lines, the check counts, and the named stack frames of a hung test.
#
#   scripts/gpu-rerun.sh DEVICE TEST... (after a build into $BUILD_DIR)
# Logs go to ${OUT:-/tmp}/rerun-<device>.log.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
BUILD="${BUILD_DIR:-$ROOT/build-gpu}"
dev=$1; shift
log="${OUT:-/tmp}/rerun-${dev//:/}.log"
: > "$log"
tmp=$(mktemp -d)
for t in "$@"; do
  ( cd "$BUILD" && KILN_TEST_DEVICES="$dev" KILN_DEVICE="$dev" \
      KILN_TEST_WATCHDOG="${KILN_TEST_WATCHDOG:-90}" \
      ctest -V -R "^$t\$" --timeout 300 > "$tmp/$t.log" 2>&1 ) &
done
wait
for t in "$@"; do
  {
    echo "=== $t on $dev: $(grep -aE 'tests passed' "$tmp/$t.log" | tail -1)"
    grep -aE 'FAIL|[0-9]+ passed, [0-9]+ failed$|Assert|Segmentation|error|soak:|at the end|^([0-9]+: )?steps:|Total Test time' "$tmp/$t.log" | head -60
    if grep -aq "watchdog (KILN_TEST_WATCHDOG)" "$tmp/$t.log"; then
      grep -aE "^([0-9]+: )?--- thread|\(\+0x[0-9a-f]+\)" "$tmp/$t.log" |
        while IFS= read -r l; do
          if [[ $l =~ ([^ ]+)\(\+(0x[0-9a-f]+)\) ]]; then
            echo "  $(basename "${BASH_REMATCH[1]}") $(addr2line -f -C -p -e "${BASH_REMATCH[1]}" "${BASH_REMATCH[2]}" 2>/dev/null | head -1)"
          else echo "$l"; fi
        done | grep -v "pocl_pthread\|__nptl\|pthread_cond\|__clone\|kt_stack_here\|__sigaction" | head -80
    fi
  } >> "$log"
done
rm -rf "$tmp"
