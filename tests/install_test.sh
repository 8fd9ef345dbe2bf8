#!/usr/bin/env bash
# Installs kiln from the build tree into a temporary prefix and builds
# examples/vadd.c against it twice: through find_package(kiln) and through
# pkg-config. Runs both programs. Usage: install_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$1 src=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cmake --install "$build" --prefix "$tmp/prefix" >/dev/null
for f in include/kiln.h include/kiln/version.h include/kiln/status.h \
         include/kiln/opencl.h include/kiln/cuda.h \
         lib/cmake/kiln/kilnConfig.cmake lib/pkgconfig/kiln.pc; do
  [ -e "$tmp/prefix/$f" ] || { echo "FAIL: $f not installed"; exit 1; }
done
mkdir "$tmp/consumer"
cp "$src/examples/vadd.c" "$tmp/consumer/"
cat > "$tmp/consumer/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.20)
project(consumer C)
find_package(kiln REQUIRED)
add_executable(vadd vadd.c)
target_link_libraries(vadd kiln::kiln)
CM
cmake -S "$tmp/consumer" -B "$tmp/consumer/b" -DCMAKE_PREFIX_PATH="$tmp/prefix" \
      -DCMAKE_C_FLAGS="${KILN_TEST_LDFLAGS:-}" >/dev/null
cmake --build "$tmp/consumer/b" >/dev/null
export PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig"
# The sanitizer flags of a test build must reach the consumer's link too.
cc ${KILN_TEST_LDFLAGS:-} "$tmp/consumer/vadd.c" $(pkg-config --cflags --libs kiln) -o "$tmp/consumer/vadd_pc"
export LD_LIBRARY_PATH="$tmp/prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
"$tmp/consumer/b/vadd"
"$tmp/consumer/vadd_pc"
# kiln/opencl.h compiles and its functions are exported (where CL/cl.h is
# on the compiler's default path)
if echo '#include <CL/cl.h>' | cc -E -x c - >/dev/null 2>&1; then
  printf '%s\n' '#define CL_TARGET_OPENCL_VERSION 300' '#include <kiln/opencl.h>' \
    'int main(void) { cl_device_id id; return kiln_opencl_device_native(NULL, &id) != KILN_ERROR_NULL_HANDLE; }' \
    > "$tmp/consumer/interop.c"
  cc ${KILN_TEST_LDFLAGS:-} "$tmp/consumer/interop.c" $(pkg-config --cflags --libs kiln) -o "$tmp/consumer/interop"
  "$tmp/consumer/interop"
fi
echo "2 passed, 0 failed"
