#!/usr/bin/env bash
# Checks that the built libkiln.so has the ABI recorded in abi/ (docs/api.md,
# rule 10). Builds nothing: give it a build directory.
#
#   scripts/check-abi.sh BUILD_DIR            compare; exit 1 on any change
#   scripts/check-abi.sh --update BUILD_DIR   record the library's ABI
#
# Two checks:
#  1. abi/kiln.symbols: the exported functions and objects named kiln_*
#     (nm -D --defined-only), sorted. Any other exported function or object
#     fails too (everything but KILN_API is hidden).
#  2. abi/kiln.abi: the ABI as abidw records it from the library's debug
#     info, limited to the types of the public headers (include/); compared
#     with abidiff, which fails on any change (a new function included: a
#     change that is meant is recorded with --update in the same commit).
# The library needs debug info (-g: Debug or RelWithDebInfo builds); a
# sanitized build exports the same set and works as well.
# Needs nm (binutils) and abidw/abidiff (Debian: abigail-tools).
set -euo pipefail

update=0
if [ "${1:-}" = "--update" ]; then
  update=1
  shift
fi
if [ $# -ne 1 ]; then
  echo "usage: $0 [--update] BUILD_DIR" >&2
  exit 2
fi
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$(cd "$1" && pwd)"
lib="$build/libkiln.so"
symbols="$root/abi/kiln.symbols"
abi="$root/abi/kiln.abi"
[ -e "$lib" ] || { echo "check-abi: $lib not found (build kiln first)" >&2; exit 2; }
for tool in nm readelf abidw abidiff; do
  command -v "$tool" >/dev/null || {
    echo "check-abi: $tool not found (Debian: apt-get install binutils abigail-tools)" >&2
    exit 2
  }
done

# (read the whole listing: grep -q would stop early, and pipefail would
# then see readelf die of SIGPIPE)
if ! readelf -S "$lib" 2>/dev/null | grep -c '\.debug_info' >/dev/null; then
  echo "check-abi: $lib has no debug info; build with -DCMAKE_BUILD_TYPE=Debug or RelWithDebInfo" >&2
  exit 2
fi

# The ABI is that of a full build: kiln/cuda.h's functions are part of it,
# and they are only built with the CUDA headers (cuda.h) at build time.
if grep -q '^KILN_CUDA_INCLUDE_DIR:PATH=.*NOTFOUND' "$build/CMakeCache.txt" 2>/dev/null; then
  echo "check-abi: SKIPPED: $build was configured without cuda.h, so it lacks the"
  echo "  kiln_cuda_* functions of the recorded ABI (install the CUDA toolkit's headers)"
  exit 0
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols that are functions or data (T, D, B, R, V, W;
# not the absolute _edata/_end markers), one "NAME" a line.
nm -D --defined-only "$lib" | awk '$2 ~ /^[TtDdBbRrVvWw]$/ { print $3 }' |
  LC_ALL=C sort -u > "$tmp/exported"
grep '^kiln_' "$tmp/exported" > "$tmp/kiln.symbols" || true
# abidw: public types only, without the paths of this checkout and build
# (they differ between machines and mean nothing to the ABI).
abidw --headers-dir "$root/include" --drop-private-types --exported-interfaces-only \
      --no-corpus-path --no-show-locs --no-comp-dir-path --no-elf-needed \
      --out-file "$tmp/raw.abi" "$lib"
sed -e "s|path='$root/|path='|g" -e "s|path='$build/|path='BUILD/|g" "$tmp/raw.abi" > "$tmp/kiln.abi"

if [ $update -eq 1 ]; then
  mkdir -p "$root/abi"
  cp "$tmp/kiln.symbols" "$symbols"
  cp "$tmp/kiln.abi" "$abi"
  echo "check-abi: recorded $(wc -l < "$symbols") symbols in abi/kiln.symbols and the ABI in abi/kiln.abi"
  exit 0
fi

fail=0
others="$(grep -v '^kiln_' "$tmp/exported" | grep -v -x -e _init -e _fini || true)"
if [ -n "$others" ]; then
  echo "check-abi: libkiln.so exports symbols outside the kiln_ namespace:"
  echo "$others" | sed 's/^/  /'
  fail=1
fi
if [ ! -e "$symbols" ] || [ ! -e "$abi" ]; then
  echo "check-abi: abi/kiln.symbols or abi/kiln.abi missing; record them with $0 --update $1"
  exit 1
fi
if ! diff -u --label abi/kiln.symbols --label "exported by $lib" "$symbols" "$tmp/kiln.symbols"; then
  echo "check-abi: the exported symbols changed (+ new, - gone)"
  fail=1
fi
# abidiff's exit code is a bit set: 1 error, 2 usage, 4 ABI change,
# 8 incompatible change. Anything but 0 fails.
set +e
abidiff --no-show-locs "$abi" "$tmp/kiln.abi" > "$tmp/abidiff.txt" 2>&1
rc=$?
set -e
if [ $rc -ne 0 ]; then
  cat "$tmp/abidiff.txt"
  what="changed"
  [ $((rc & 8)) -ne 0 ] && what="changed incompatibly"
  [ $((rc & 3)) -ne 0 ] && what="could not be compared (abidiff exit $rc)"
  echo "check-abi: the ABI $what against abi/kiln.abi"
  fail=1
fi
if [ $fail -ne 0 ]; then
  echo "check-abi: FAILED. If the change is meant, run: $0 --update $1"
  echo "  and commit abi/ with a message that says what changed (docs/api.md, rule 10)."
  exit 1
fi
echo "check-abi: ok ($(wc -l < "$symbols") symbols, ABI unchanged)"
