"""python -m kiln.demo: its answers against plain Python loops, its
pictures as valid PNGs of those answers, and the command's exit status."""
import math
import os
import struct
import subprocess
import sys
import zlib

import numpy as np


def pnpoly(vx, vy, x, y):
    inside = False
    j = len(vx) - 1
    for k in range(len(vx)):
        if (vy[k] > y) != (vy[j] > y) and x < (vx[j] - vx[k]) * (y - vy[k]) / (vy[j] - vy[k]) + vx[k]:
            inside = not inside
        j = k
    return inside


def read_png(path):
    data = open(path, "rb").read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    pos, idat, head = 8, b"", None
    while pos < len(data):
        (n,) = struct.unpack(">I", data[pos:pos + 4])
        kind, body = data[pos + 4:pos + 8], data[pos + 8:pos + 8 + n]
        (crc,) = struct.unpack(">I", data[pos + 8 + n:pos + 12 + n])
        assert crc == zlib.crc32(kind + body)
        if kind == b"IHDR":
            head = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    w, h, depth, colour = head[:4]
    assert depth == 8
    chans = 3 if colour == 2 else 1
    raw = zlib.decompress(idat)
    rows = [raw[r * (w * chans + 1):(r + 1) * (w * chans + 1)] for r in range(h)]
    assert all(row[0] == 0 for row in rows)  # filter "none"
    return np.frombuffer(b"".join(row[1:] for row in rows), np.uint8).reshape(h, w, chans)


def test_demo_answers_and_pictures(kiln, tmp_path):
    from kiln import demo

    size, points, dim = 61, 37, 5  # odd sizes: rows of the grid are not a power of two
    r = demo.run(size, points, dim, repeat=1, out=str(tmp_path), stream=open(os.devnull, "w"))
    vx, vy = demo.star()
    x0, step = demo.grid(size)
    rng = np.random.default_rng(7)
    wrong = 0
    for _ in range(200):
        i, j = int(rng.integers(size)), int(rng.integers(size))
        x, y = x0 + step * np.float32(j), x0 + step * np.float32(i)
        wrong += int(r["mask"][i, j]) != int(pnpoly(vx, vy, x, y))
    assert wrong <= 2  # a sampled pixel on an edge may round differently
    assert r["mask_diff"] <= 4  # only pixels on an edge may round differently
    assert 0.2 < r["mask"].mean() < 0.8
    p = np.random.default_rng(12345).random((points, dim), dtype=np.float32)
    p = p[np.argsort(p[:, 0], kind="stable")]
    for _ in range(100):
        a, b = int(rng.integers(points)), int(rng.integers(points))
        want = math.sqrt(sum((float(p[a, k]) - float(p[b, k])) ** 2 for k in range(dim)))
        assert abs(r["dist"][a, b] - want) < 1e-5
    assert np.all(np.diag(r["dist"]) == 0)
    mask_png, dist_png = r["pictures"]
    img = read_png(mask_png)
    assert img.shape == (size, size, 1)
    assert np.array_equal(img[::-1, :, 0], r["mask"] * 255)
    assert read_png(dist_png).shape == (points, points, 3)


def test_demo_pyopencl(kiln, tmp_path):
    import pytest

    pytest.importorskip("pyopencl")
    from kiln import demo

    r = demo.run(53, 29, 3, repeat=1, out=str(tmp_path), stream=open(os.devnull, "w"))
    if r["pyopencl"] is None:
        pytest.skip("PyOpenCL finds no device")
    mask_diff, dist_err = r["pyopencl"]
    assert mask_diff <= 4 and dist_err < 1e-5


def test_demo_cython_and_numba(kiln, tmp_path, monkeypatch):
    """The Cython columns (the seeds' OpenMP loops, and kiln's offload from
    Cython) and Numba's agree with NumPy; each skips without its tool."""
    import pytest

    from kiln import demo

    monkeypatch.setenv("KILN_CACHE_DIR", str(tmp_path / "cache"))  # a fresh compile
    r = demo.run(47, 31, 4, repeat=1, out=str(tmp_path), stream=open(os.devnull, "w"))
    ran = 0
    for name in ("Cython + OpenMP", "Cython + kiln offload", "Numba (parallel)"):
        if name in r["skipped"]:
            assert name not in r["peers"]
            continue
        mask_diff, dist_err = r["peers"][name]
        assert mask_diff <= 4 and dist_err < 1e-5, name
        ran += 1
    if not ran:
        pytest.skip("neither Cython nor Numba is installed: " + str(r["skipped"]))


def test_demo_command(kiln, tmp_path):
    out = subprocess.run([sys.executable, "-m", "kiln.demo", "--size", "64", "--points", "50",
                          "--repeat", "1", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "speed-up" in out.stdout and "polygon mask" in out.stdout
    for peer in ("Cython + OpenMP", "Cython + kiln offload", "Numba (parallel)", "PyOpenCL"):
        assert peer in out.stdout  # a row each: times, or why it did not run
    assert os.path.exists(tmp_path / "polygon_mask.png")
    # a device named by selector ("0": the first device kiln lists)
    named = subprocess.run([sys.executable, "-m", "kiln.demo", "--size", "16", "--points", "9",
                            "--repeat", "1", "--device", "0", "--out", str(tmp_path)],
                           capture_output=True, text=True, timeout=300)
    assert named.returncode == 0, named.stderr
    bad = subprocess.run([sys.executable, "-m", "kiln.demo", "--size", "0"],
                         capture_output=True, text=True, timeout=60)
    assert bad.returncode == 2 and "--size" in bad.stderr
