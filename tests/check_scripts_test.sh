#!/usr/bin/env bash
# The CI checks themselves, on small trees made here: scripts/check-abi.sh
# (on a two-function libkiln.so built with cc -g) and scripts/check-layers.py
# (on a small tree, then with forbidden includes added); and
# scripts/trace-summary.py on a small trace. Each must
# pass what is right and fail, naming the cause, on what is wrong.
# Usage: check_scripts_test.sh SOURCE_DIR. Exit 77 (skip) without the tools.
set -uo pipefail
src=$1
for tool in cc nm readelf abidw abidiff python3; do
  command -v "$tool" >/dev/null || { echo "SKIPPED: $tool not found"; exit 77; }
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0 failed=0
check() { # check WANT_RC WANT_TEXT DESCRIPTION -- command...
  local want=$1 text=$2 what=$3 out rc
  shift 4
  out=$("$@" 2>&1); rc=$?
  if [ "$rc" -eq "$want" ] && { [ -z "$text" ] || grep -qF -- "$text" <<<"$out"; }; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "FAIL: $what: exit $rc (wanted $want${text:+, output with \"$text\"}):"
    sed 's/^/    /' <<<"$out"
  fi
}

# ---- check-abi.sh on a fake tree: ROOT/scripts, ROOT/include, ROOT/build
root=$tmp/abi
mkdir -p "$root/scripts" "$root/include" "$root/build"
cp "$src/scripts/check-abi.sh" "$root/scripts/"
abi="$root/scripts/check-abi.sh"
header() { # the public header; $1: extra struct member
  printf '%s\n' '#define KILN_API __attribute__((visibility("default")))' \
    "typedef struct kiln_point { int x, y; $1 } kiln_point;" \
    'KILN_API int kiln_point_sum(const kiln_point *p);' \
    'KILN_API extern int kiln_points_made;' > "$root/include/kiln.h"
}
lib() { # builds libkiln.so from the header and "$@" more source lines
  { echo '#include "kiln.h"'
    echo 'int kiln_points_made;'
    echo 'int kiln_point_sum(const kiln_point *p) { return p->x + p->y; }'
    echo 'int kiln__internal(void) { return 1; }'
    printf '%s\n' "$@"
  } > "$root/lib.c"
  cc ${CFLAGS_ABI:--g} -shared -fPIC -fvisibility=hidden -I"$root/include" \
     "$root/lib.c" -o "$root/build/libkiln.so"
}
header ""
lib
check 1 "abi/kiln.symbols or abi/kiln.abi missing" "no baseline yet" -- "$abi" "$root/build"
check 0 "recorded 2 symbols" "--update" -- "$abi" --update "$root/build"
check 0 "check-abi: ok" "unchanged library" -- "$abi" "$root/build"
check 0 "" "kiln.symbols lists the exported kiln_ names" -- \
  diff <(printf 'kiln_point_sum\nkiln_points_made\n') "$root/abi/kiln.symbols"
check 1 "" "kiln.abi holds no path of this machine" -- grep -q "$root" "$root/abi/kiln.abi"
lib 'KILN_API int kiln_point_new(void) { return 0; }'
check 1 "+kiln_point_new" "a new exported function" -- "$abi" "$root/build"
lib 'KILN_API int point_leak(void) { return 0; }'
check 1 "outside the kiln_ namespace" "an exported non-kiln_ name" -- "$abi" "$root/build"
header "int z;"
lib
check 1 "the ABI changed" "a struct member added" -- "$abi" "$root/build"
header ""
CFLAGS_ABI=-g0 lib
check 2 "no debug info" "a library without debug info" -- "$abi" "$root/build"
check 2 "usage" "no build directory" -- "$abi"
check 2 "not found" "a build directory without libkiln.so" -- "$abi" "$tmp"

# ---- check-layers.py on a small tree of its own
tree=$tmp/layers
layers="$src/scripts/check-layers.py"
mkdir -p "$tree/include/kiln" "$tree/src/base" "$tree/src/core" "$tree/src/algo/array" \
         "$tree/src/algo/gen" "$tree/src/testing" "$tree/tests" "$tree/examples"
touch "$tree/include/kiln.h" "$tree/include/kiln/array.h" "$tree/src/base/error.h" \
      "$tree/src/core/internal.h" "$tree/src/algo/array/array.h" "$tree/src/algo/gen/algo.h"
printf '#include "kiln.h"\n#include "base/error.h"\n#include "algo/array/array.h"\n' > "$tree/src/algo/array/array.c"
printf '#include "algo/array/array.h"\n#include "algo/gen/algo.h"\n' > "$tree/src/algo/gen/generator.c"
printf '#include "base/error.h"\n#include "core/internal.h"\n' > "$tree/src/core/buffer.c"
printf '#include "core/internal.h"\n' > "$tree/src/testing/kiln_test_internal.h"
printf '#include "kiln.h"\n#include "testing/kiln_test_internal.h"\n' > "$tree/tests/test_x.c"
printf '#include <kiln.h>\n#include "kiln/array.h"\n' > "$tree/examples/ex.c"
check 0 "check-layers: ok" "a tree that keeps its layers" -- python3 "$layers" "$tree"
echo '#include "../../core/internal.h"' >> "$tree/src/algo/array/array.c"
check 1 'src/algo/array/array.c:4: includes "../../core/internal.h"' \
  "algo reaching into core by a relative path (file and line named)" -- python3 "$layers" "$tree"
sed -i '$d' "$tree/src/algo/array/array.c"
echo '#include "algo/gen/algo.h"' >> "$tree/src/algo/array/array.c"
check 1 'src/algo/array/array.c:4: includes "algo/gen/algo.h"' \
  "the array object including the generators above it" -- python3 "$layers" "$tree"
sed -i '$d' "$tree/src/algo/array/array.c"
printf '#include "algo/gen/algo.h"\n' > "$tree/src/algo/stray.c"
check 1 'src/algo/stray.c:1' "a file outside src/algo's folders" -- python3 "$layers" "$tree"
rm "$tree/src/algo/stray.c"
printf '#include "core/internal.h"\n' > "$tree/tests/test_bad.c"
check 1 "tests/test_bad.c:1" "a test including a core header" -- python3 "$layers" "$tree"
rm "$tree/tests/test_bad.c"
printf '#include "../src/base/error.h"\n' > "$tree/examples/bad.c"
check 1 "examples/bad.c:1" "an example including a src/ header" -- python3 "$layers" "$tree"
rm "$tree/examples/bad.c"
check 0 "check-layers: ok" "the tree repaired" -- python3 "$layers" "$tree"

# ---- check-ladders.py on a small tree of its own
lt=$tmp/ladders
mkdir -p "$lt/src/core" "$lt/scripts"
ladder() { # ladder N: a function of N `if (st == KILN_OK)` steps
  { echo 'int f(void) {'; echo '    kiln_status st = a();'
    for _ in $(seq "$1"); do printf '    if (st == KILN_OK)\n        st = a();\n'; done
    echo '    return st;'; echo '}'; } > "$lt/src/core/f.c"
}
ladder 3
check 0 "check-ladders: ok" "three steps in a row" -- python3 "$src/scripts/check-ladders.py" "$lt"
ladder 4
check 1 "src/core/f.c:3: f: 4" "four steps in a row (file, line, function named)" -- \
  python3 "$src/scripts/check-ladders.py" "$lt"
echo "src/core/f.c f 4" > "$lt/scripts/ladders-allowed.txt"
check 0 "1 allowed for now" "a listed function at its count" -- python3 "$src/scripts/check-ladders.py" "$lt"
ladder 5
check 1 "src/core/f.c:3: f: 5" "a listed function over its count" -- python3 "$src/scripts/check-ladders.py" "$lt"

# ---- trace-summary.py on a small trace of two devices
ts="$src/scripts/trace-summary.py"
cat > "$tmp/t.json" <<'JSON'
{"displayTimeUnit":"ns","otherData":{"generator":"kiln test","dropped":0,"unfinished":0},
"traceEvents":[
{"ph":"M","name":"process_name","pid":0,"args":{"name":"kiln"}},
{"ph":"M","name":"process_name","pid":1,"args":{"name":"cuda:0 GPU A"}},
{"ph":"M","name":"process_name","pid":2,"args":{"name":"opencl:0:0 CPU B"}},
{"ph":"X","name":"k_pass","pid":1,"tid":1,"ts":0,"dur":30,"args":{"timing":"device"}},
{"ph":"X","name":"k_pass","pid":1,"tid":1,"ts":40,"dur":10,"args":{"timing":"device"}},
{"ph":"X","name":"k_pass","pid":1,"tid":1,"ts":60,"dur":20,"args":{"timing":"device"}},
{"ph":"X","name":"k_hist","pid":1,"tid":1,"ts":90,"dur":40,"args":{"timing":"device"}},
{"ph":"X","name":"k_cpu","pid":2,"tid":1,"ts":0,"dur":7,"args":{"timing":"host"}}
]}
JSON
# k_pass: 3 runs, median 20, total 60 of 100 device us
check 0 "device k_pass                            3       20.0      10.0      30.0        60.0  60.0%" \
  "trace-summary: per-command median and share" -- python3 "$ts" "$tmp/t.json"
check 0 "host   k_cpu" "trace-summary: host-timed commands apart" -- python3 "$ts" "$tmp/t.json"
check 1 "no commands in the trace on a device matching 'GPU Z'" \
  "trace-summary: a device filter that matches nothing" -- python3 "$ts" "$tmp/t.json" --device "GPU Z"
printf '{"traceEvents": [' > "$tmp/bad.json"
check 1 "cannot read $tmp/bad.json" "trace-summary: a truncated trace" -- python3 "$ts" "$tmp/bad.json"

echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
