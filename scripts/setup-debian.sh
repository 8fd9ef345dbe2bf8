#!/usr/bin/env bash
# Installs what building and running kiln needs on Debian 12, if missing.
# As root it installs; otherwise it prints the one command to run.
# Usage: scripts/setup-debian.sh [run|test]   (test adds the test-only tools)
set -euo pipefail
want=(gcc make cmake pkg-config opencl-c-headers ocl-icd-libopencl1 ocl-icd-opencl-dev
      pocl-opencl-icd clinfo libpng-dev libcairo2-dev python3)
# (the sanitizers come with gcc: libasan, libubsan)
if [ "${1:-run}" = test ]; then
  # scripts/check-abi.sh: nm (binutils), abidw and abidiff (abigail-tools)
  want+=(binutils abigail-tools)
  # BLAS and FFT libraries kiln loads at run time (docs/linalg.md): the
  # tests skip without them, so CI installs them to run those paths
  want+=(libclblast1 libclfft2 libopenblas0 libfftw3-single3 libfftw3-double3)
  # scripts/fuzz.sh: clang with libFuzzer (libclang-rt-14-dev)
  want+=(clang libclang-rt-14-dev)
  # kiln_mpi and its tests under mpirun (docs/distributed.md)
  want+=(libopenmpi-dev openmpi-bin)
  # kiln_gl, examples/gl and test_gl (docs/gl.md): EGL's and GL's headers
  # and libraries, Mesa's EGL and its software renderer (llvmpipe) for a
  # context without a window
  want+=(libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri)
  # scripts/check-format.sh: the one format (.clang-format)
  want+=(clang-format)
  # scripts/python-test.sh (make test-python): a venv and the headers the
  # extension compiles against
  want+=(python3-venv python3-dev)
fi
missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0
cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null; then
  echo "kiln setup: installing ${missing[*]}"
  export DEBIAN_FRONTEND=noninteractive
  apt-get update -qq && apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
else
  echo "kiln setup: missing Debian packages: ${missing[*]}" >&2
  echo "run as root:  $cmd" >&2
  exit 1
fi
