#!/usr/bin/env bash
# The Python package on the GPU machine (no network there): builds and
# installs python/ with the machine's own python3 (pip --no-build-isolation;
# scikit-build-core, pathspec, packaging and pytest from wheels in .whl/
# when the machine lacks them: see /work/.library/device/README.md's
# note on wheels), runs python/tests on $KILN_DEVICE (default cuda:0),
# CuPy/PyTorch DLPack interop included, then the Python benchmarks.
# Logs in ${OUT:-/tmp}/kiln-gpu-python/.
set -u
root=$(cd "$(dirname "$0")/.." && pwd)
logs=${OUT:-/tmp}/kiln-gpu-python
mkdir -p "$logs"
export KILN_DEVICE=${KILN_DEVICE:-cuda:0} KILN_CACHE_QUIET=1
if ls "$root"/.whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target /tmp/kiln-site "$root"/.whl/*.whl
  export PYTHONPATH=/tmp/kiln-site${PYTHONPATH:+:$PYTHONPATH}
fi
if ! python3 -m pip install -q --no-build-isolation --no-deps --force-reinstall \
    "$root/python" >"$logs/install.log" 2>&1; then
  echo "gpu-python-test: the package did not build"; tail -30 "$logs/install.log"; exit 1
fi
echo "== pytest on $KILN_DEVICE"
(cd "$root/python/tests" && python3 -m pytest -q -p no:cacheprovider -rs . >"$logs/pytest.log" 2>&1)
tail -n 25 "$logs/pytest.log"
echo "== bench_python.py"
timeout 200 python3 "$root/bench/bench_python.py" --rounds 5 --big 20 2>&1 | tee "$logs/bench_python.log" | tail -n 15
echo "== bench_python_peers.py"
timeout 120 python3 "$root/bench/bench_python_peers.py" 2>&1 | tee "$logs/bench_python_peers.log"
