#!/usr/bin/env bash
# Builds and tests the Python package (python/) in a virtual environment:
#   scripts/python-test.sh [venv-dir]        (default build-py/venv)
# Creates the venv if needed, pip-installs numpy, pytest, hypothesis, Cython and
# scikit-build-core, then this checkout's package (libkiln and the
# extension, built by the package's own unsanitised CMake build), and runs
# python/tests with private PoCL and kiln caches. Needs network for the
# first pip install; later runs reuse the venv (KILN_PY_OFFLINE=1 skips
# the pip step of the tools entirely). Exits 77 when no Python venv can be
# made (python3-venv missing) or the tools cannot be installed (no network
# and none there), so callers can tell a skip from a failure.
#
# KILN_PY_SANITIZE=1: the same with libkiln and the extension built with
# AddressSanitizer + UBSan (venv build-py/venv-asan, build dir
# build-py/skbuild-asan), the interpreter run with libasan preloaded
# (leak detection off: CPython's own allocations would drown it).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
san=${KILN_PY_SANITIZE:-0}
if [ "$san" = 1 ]; then
  venv=${1:-$root/build-py/venv-asan}
else
  venv=${1:-$root/build-py/venv}
fi
py=${PYTHON:-python3}
if [ ! -x "$venv/bin/python" ]; then
  if ! "$py" -m venv "$venv" >/dev/null 2>&1; then
    echo "python-test: cannot create a venv with $py (install python3-venv)" >&2
    exit 77
  fi
fi
vpy=$venv/bin/python
if [ "${KILN_PY_OFFLINE:-0}" != 1 ]; then
  if ! "$vpy" -m pip install -q --disable-pip-version-check numpy pytest hypothesis cython setuptools \
      "scikit-build-core>=0.9"; then
    echo "python-test: pip could not install the tools (no network?)" >&2
  fi
  # peers, not tools: the demo's PyOpenCL and Numba columns and its notebook (their tests
  # skip without them)
  "$vpy" -m pip install -q --disable-pip-version-check pyopencl ||
    echo "python-test: PyOpenCL not installed: the demo's PyOpenCL test skips" >&2
  "$vpy" -m pip install -q --disable-pip-version-check numba ||
    echo "python-test: Numba not installed: the demo's Numba column skips" >&2
  # mpi4py for kiln.distributed's tests (mpirun -np 1 and 2; Open MPI from
  # setup-debian.sh): they skip without it
  "$vpy" -m pip install -q --disable-pip-version-check mpi4py ||
    echo "python-test: mpi4py not installed: kiln.distributed's tests skip" >&2
  "$vpy" -m pip install -q --disable-pip-version-check nbclient nbformat ipykernel ||
    echo "python-test: nbclient/ipykernel not installed: the demo notebook's test skips" >&2
fi
if ! "$vpy" -c "import numpy, pytest, scikit_build_core" 2>/dev/null; then
  echo "python-test: numpy, pytest or scikit-build-core missing in $venv: skipped" >&2
  exit 77
fi
# --no-build-isolation: the tools above are the build's (works offline too)
# the package's CMake build on every core (a Makefile build runs one job
# otherwise)
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-$(nproc 2>/dev/null || echo 2)}
build_opts=()
if [ "$san" = 1 ]; then
  build_opts=(--config-settings=cmake.define.KILN_SANITIZE=ON
              --config-settings=build-dir="$root/build-py/skbuild-asan")
fi
"$vpy" -m pip install -q --disable-pip-version-check --no-build-isolation --no-deps \
  --force-reinstall "${build_opts[@]}" "$root/python"
# Caches private to this checkout (no race with other processes' PoCL
# caches), kept between runs: a rerun compiles nothing.
cache=${KILN_PY_CACHE:-$root/build-py/cache}
export POCL_CACHE_DIR=$cache/pocl KILN_CACHE_DIR=$cache/kiln KILN_CACHE_QUIET=1
# the suite's default device: PoCL (the OpenCL path), as ctest's; the
# host backend (kiln's default CPU device) passes it too (docs/python.md)
export KILN_DEVICE=${KILN_DEVICE:-pocl}
mkdir -p "$POCL_CACHE_DIR" "$KILN_CACHE_DIR"
chmod 700 "$cache" "$KILN_CACHE_DIR"
# run from the tests' folder, not the checkout root, so `import kiln` is
# the installed package
cd "$root/python/tests"
if [ "$san" = 1 ]; then
  export LD_PRELOAD="$(gcc -print-file-name=libasan.so) $(gcc -print-file-name=libubsan.so)"
  export ASAN_OPTIONS=detect_leaks=0:abort_on_error=0:intercept_tls_get_addr=0
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
fi
exec "$vpy" -m pytest -q -p no:cacheprovider --durations=5 "${@:2}" .
