#!/usr/bin/env bash
# Issue 47 on the GPU machine (graphs, fission, split, OpenGL sharing), in
# under 5 minutes: builds the pieces (Release), then
#   1. OpenGL sharing: examples/gl/polygon_mask_gl and test_gl on cuda:0,
#      nvidia (NVIDIA's OpenCL) and pocl, with EGL on the NVIDIA driver
#      where it has EGL (the "sharing:" line says which path ran);
#   2. test_graph, test_graph_native, test_split on the same devices;
#   3. fission / green contexts and the latency bench (bench_fission:
#      p50/p99 of a small kernel beside a compute- and a memory-bound
#      load, vs idle) on cuda:0 (10^4 samples; kiln cannot split it yet:
#      the unreserved baseline) and pocl; bench_latency_green: the same on
#      a green-context partition made through the driver API;
#   4. bench_graph on cuda:0 (with the raw CUDA graph and
#      cuGraphExecKernelNodeSetParams in the same run), nvidia and pocl;
#   5. bench_split on pocl (sub-devices of the host CPU);
# and prints a short summary. Never stops at the first failure.
#
#   scripts/gpu-graphs-test.sh     (from the repository root, as root so
#                                   that NVIDIA's OpenCL gets registered)
# Logs in ${OUT:-/tmp}/kiln-gpu-graphs/; BUILD_DIR overrides the build dir.
#
# The GPU machine's image has NVIDIA's EGL driver but no GL loaders or
# headers; carry them as Debian packages in .gl/ (named in `carry`), made
# once on the development machine from the repository root:
#   echo /.gl/ >> .git/info/exclude; mkdir -p .gl /tmp/amd64/partial
#   o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
#   apt-get $o update; (cd .gl && apt-get $o download libegl1 libglvnd0 \
#     libopengl0 libgl1 libglx0 libgles2 libegl-dev libgl-dev libglx-dev)
# This script unpacks them (dpkg -x) and points glvnd at NVIDIA's EGL.
set -u
ROOT="$(cd "$(dirname "$0")/.." && pwd)"
LOGS="${OUT:-/tmp}/kiln-gpu-graphs"
BUILD="${BUILD_DIR:-$ROOT/build-gpu-graphs}"
DEVICES="${DEVICES:-cuda:0 nvidia pocl}"
mkdir -p "$LOGS"
SUMMARY="$LOGS/summary.txt"
: > "$SUMMARY"
say() { echo "== $*" | tee -a "$SUMMARY"; }
note() { echo "   $*" | tee -a "$SUMMARY"; }
export KILN_CACHE_DIR="/tmp/kiln-gpu-graphs-cache" POCL_CACHE_DIR="/tmp/kiln-gpu-graphs-pocl" KILN_CACHE_QUIET=1
export CUDA_HOME="${CUDA_HOME:-/usr/local/cuda}"
if ls "$ROOT"/.gl/*.deb > /dev/null 2>&1; then
  for f in "$ROOT"/.gl/*.deb; do dpkg -x "$f" / 2>/dev/null; done
  ldconfig 2>/dev/null
  note "unpacked $(ls "$ROOT"/.gl/*.deb | wc -l) GL packages from .gl/"
fi
nv_egl=/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json
[ -z "${__EGL_VENDOR_LIBRARY_FILENAMES:-}" ] && [ -e "$nv_egl" ] && export __EGL_VENDOR_LIBRARY_FILENAMES="$nv_egl"

# NVIDIA's OpenCL with the ICD loader (as scripts/gpu-test.sh does)
if ldconfig -p 2>/dev/null | grep -q libnvidia-opencl.so.1 || [ -e /usr/lib/libnvidia-opencl.so.1 ]; then
  nv_ocl=1
else
  nv_ocl=0; note "libnvidia-opencl.so.1 not found: no 'nvidia' OpenCL device"
fi
if [ $nv_ocl = 1 ] && ! grep -qs libnvidia-opencl /etc/OpenCL/vendors/*.icd 2>/dev/null; then
  mkdir -p /etc/OpenCL/vendors 2>/dev/null &&
    echo libnvidia-opencl.so.1 > /etc/OpenCL/vendors/nvidia.icd 2>/dev/null ||
    note "cannot register NVIDIA's OpenCL (not root?)"
fi
[ -e /usr/lib/libnvidia-opencl.so.1 ] && export LD_LIBRARY_PATH="/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
say "GPU: $(nvidia-smi -L 2>&1 | head -1); driver $(nvidia-smi --query-gpu=driver_version --format=csv,noheader 2>/dev/null | head -1)"
for lib in libEGL.so.1 libEGL_nvidia.so.0 libGL.so.1 libEGL_mesa.so.0; do
  ldconfig -p 2>/dev/null | grep -q "$lib" && note "$lib: present" || note "$lib: absent"
done

say "build in $BUILD"
targets="kiln_gl polygon_mask_gl test_gl test_graph test_graph_native test_split bench_graph bench_fission bench_split bench_latency_green"
if ! cmake -S "$ROOT" -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DKILN_MPI=OFF > "$LOGS/configure.log" 2>&1; then
  note "configure FAILED"; tail -20 "$LOGS/configure.log"; exit 1
fi
grep -E "kiln_gl:" "$LOGS/configure.log" | sed 's/^/   /' | tee -a "$SUMMARY"
built=""
for t in $targets; do
  if timeout 240 cmake --build "$BUILD" -j"$(nproc)" --target "$t" >> "$LOGS/build.log" 2>&1; then
    built="$built $t"
  else
    note "target $t not built (no EGL/GL headers: apt-get install libegl-dev libgl-dev; see build.log)"
  fi
done
has() { case " $built " in *" $1 "*) return 0 ;; esac; return 1; }

say "1. OpenGL sharing"
for d in $DEVICES; do
  if has polygon_mask_gl; then
    KILN_DEVICE=$d timeout 60 "$BUILD/examples/polygon_mask_gl" "$LOGS/mask-${d//:/}.png" 1024 \
      > "$LOGS/gl-example-${d//:/}.log" 2>&1
    rc=$?
    note "polygon_mask_gl on $d: exit $rc; $(grep -E 'sharing:|check:' "$LOGS/gl-example-${d//:/}.log" | tr -s ' ' | tr '\n' ';')"
    [ $rc -eq 77 ] && note "  (no GL context: $(tail -1 "$LOGS/gl-example-${d//:/}.log"))"
  fi
  if has test_gl; then
    KILN_TEST_DEVICES=$d timeout 120 "$BUILD/tests/test_gl" > "$LOGS/test_gl-${d//:/}.log" 2>&1
    note "test_gl on $d: exit $? ($(tail -1 "$LOGS/test_gl-${d//:/}.log"))"
    grep -m3 -E "^  (buffer of 400012|texture 37x19)" "$LOGS/test_gl-${d//:/}.log" | sed 's/^/     /' | tee -a "$SUMMARY"
  fi
done

say "2. graph and split tests"
for t in test_graph test_graph_native test_split; do
  has $t || continue
  KILN_TEST_DEVICES=$(echo $DEVICES | tr ' ' ',') timeout 150 "$BUILD/tests/$t" > "$LOGS/$t.log" 2>&1
  note "$t: exit $? ($(tail -1 "$LOGS/$t.log"))"
done

say "3. fission, green contexts, latency (bench_fission)"
if has bench_fission; then
  for d in cuda:0 pocl; do
    n=10000; [ "$d" = pocl ] && n=3000
    KILN_DEVICE=$d timeout 120 "$BUILD/bench/bench_fission" $n > "$LOGS/fission-${d//:/}.log" 2>&1
    note "bench_fission on $d ($n samples): exit $?"
    sed 's/^/     /' "$LOGS/fission-${d//:/}.log" | tee -a "$SUMMARY"
  done
fi

if has bench_latency_green; then
  timeout 120 "$BUILD/bench/bench_latency_green" 10000 16 > "$LOGS/latency-green.log" 2>&1
  note "bench_latency_green (driver-API green contexts, 16 SMs reserved): exit $?"
  sed 's/^/     /' "$LOGS/latency-green.log" | tee -a "$SUMMARY"
fi

say "4. bench_graph"
if has bench_graph; then
  for d in $DEVICES; do
    KILN_DEVICE=$d timeout 90 "$BUILD/bench/bench_graph" 1000 9 > "$LOGS/graph-${d//:/}.log" 2>&1
    note "bench_graph on $d: exit $?"
    grep -E "device:|implementation|enqueue \+ run|set_arg|raw|identical" "$LOGS/graph-${d//:/}.log" | sed 's/^/     /' | tee -a "$SUMMARY"
  done
fi

say "5. bench_split (PoCL sub-devices)"
if has bench_split; then
  KILN_DEVICE=pocl timeout 90 "$BUILD/bench/bench_split" $((1 << 24)) 5 > "$LOGS/split-pocl.log" 2>&1
  note "bench_split on pocl: exit $?"
  sed 's/^/     /' "$LOGS/split-pocl.log" | tee -a "$SUMMARY"
fi
say "summary in $SUMMARY"
