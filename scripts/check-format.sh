#!/usr/bin/env bash
# Fails when a C, CUDA C or OpenCL C file in the tree differs from what
# .clang-format gives (Debian 12's clang-format 14; the kernel templates in
# src/algo/kernels opt out, see the .clang-format there).
# Usage: scripts/check-format.sh [--fix]
set -euo pipefail
cd "$(dirname "$0")/.."
fmt=${CLANG_FORMAT:-clang-format}
if ! command -v "$fmt" >/dev/null; then
    echo "check-format: $fmt not found (Debian: apt-get install clang-format)" >&2
    exit 1
fi
mapfile -t files < <(git ls-files -co --exclude-standard src include tests tools bench examples fuzz python |
    grep -E '\.(c|h|cu|cuh|cl)$' | grep -v '^src/algo/kernels/')
if [ "${1:-}" = --fix ]; then
    "$fmt" -i "${files[@]}"
    exit 0
fi
if ! out=$("$fmt" --dry-run -Werror "${files[@]}" 2>&1); then
    echo "$out" | grep -E '^[^ ].*: (error|warning):' | cut -d: -f1 | sort -u | sed 's/^/check-format: not formatted: /' >&2
    echo "check-format: run scripts/check-format.sh --fix" >&2
    exit 1
fi
echo "check-format: ok (${#files[@]} files)"
