"""Builds python/examples/pairwise.pyx (cimport kiln, offload with data maps
in a nogil block) and checks it against NumPy. Skips without Cython."""
import os
import shutil
import subprocess
import sys

import numpy as np
import pytest

EXAMPLES = os.path.join(os.path.dirname(__file__), "..", "examples")


def test_get_include(kiln):
    inc = kiln.get_include()
    assert os.path.exists(os.path.join(inc, "kiln.h"))
    assert os.path.exists(os.path.join(inc, "kiln", "array.h"))
    assert any(f.startswith("libkiln") for f in os.listdir(kiln.get_library_dir()))
    assert os.path.exists(os.path.join(os.path.dirname(kiln.__file__), "__init__.pxd"))


def test_pairwise_pyx(kiln, tmp_path):
    pytest.importorskip("Cython")
    pytest.importorskip("setuptools")
    for f in ("pairwise.pyx", "arrays.pyx", "setup_pairwise.py"):
        shutil.copy(os.path.join(EXAMPLES, f), tmp_path)
    r = subprocess.run([sys.executable, "setup_pairwise.py", "build_ext", "--inplace"],
                       cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    code = (
        "import numpy as np, pairwise\n"
        "rng = np.random.default_rng(0)\n"
        "for m in (0, 1, 7, 65):\n"
        "    X = rng.standard_normal((m, 3))\n"
        "    D = pairwise.pairwise(X)\n"
        "    R = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))\n"
        "    assert D.shape == (m, m) and np.allclose(D, R), m\n"
        "import arrays\n"
        "for n in (1, 7, 1000):\n"
        "    a = rng.standard_normal(n).astype(np.float32)\n"
        "    b = rng.standard_normal(n).astype(np.float32)\n"
        "    assert np.array_equal(arrays.add_sorted(a, b), np.sort(a + b)), n\n"
        "print('ok')\n")
    r = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True)
    assert r.returncode == 0 and "ok" in r.stdout, r.stderr[-3000:]
