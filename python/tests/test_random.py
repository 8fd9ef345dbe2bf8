import numpy as np
import pytest


def test_uniform_normal_integers(kiln):
    g = kiln.random.default_rng(42)
    u = g.random(100_003)
    assert u.dtype == np.float64 and u.shape == (100_003,)
    x = u.get()
    assert x.min() >= 0 and x.max() < 1 and abs(x.mean() - 0.5) < 0.01
    f = g.random((31, 7), dtype=np.float32)
    assert f.dtype == np.float32 and f.shape == (31, 7)
    n = g.normal(2.0, 3.0, 100_000).get()
    assert abs(n.mean() - 2) < 0.05 and abs(n.std() - 3) < 0.05
    i = g.integers(-5, 5, 10_000).get()
    assert i.dtype == np.int64 and i.min() == -5 and i.max() == 4
    v = g.uniform(10, 20, 1000).get()
    assert v.min() >= 10 and v.max() < 20
    assert g.random().shape == ()


def test_reproducible(kiln):
    a = kiln.random.Generator(7).random(1000).get()
    b = kiln.random.Generator(7).random(1000).get()
    c = kiln.random.Generator(8).random(1000).get()
    t = kiln.random.Generator(7, "threefry").random(1000).get()
    assert np.array_equal(a, b) and not np.array_equal(a, c) and not np.array_equal(a, t)
    g = kiln.random.Generator(7)
    g.random(10)
    assert g.offset > 0
    kiln.random.seed(3)
    r1 = kiln.random.rand(5).get()
    kiln.random.seed(3)
    assert np.array_equal(r1, kiln.random.rand(5).get())
    assert kiln.random.randn(2, 3).shape == (2, 3)


def test_bad_input(kiln):
    with pytest.raises(ValueError):
        kiln.random.Generator(1, "mersenne")
    g = kiln.random.Generator(1)
    with pytest.raises(kiln.KilnError):
        g.random(10, dtype=np.int32)  # uniform needs a float dtype
    with pytest.raises(kiln.KilnError):
        g.integers(5, 5, 10)
