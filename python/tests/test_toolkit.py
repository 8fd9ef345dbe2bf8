import numpy as np
import pytest

from conftest import SIZES


def test_boolean_mask_and_nonzero(kiln, rng):
    for n in SIZES:
        x = rng.standard_normal(n)
        a = kiln.asarray(x)
        assert np.array_equal(a[a > 0.3].get(), x[x > 0.3])
        assert np.array_equal(kiln.flatnonzero(a > 0).get(), np.flatnonzero(x > 0))
    x = rng.standard_normal((4, 5, 6))
    a = kiln.asarray(x)
    assert np.array_equal(a[a > 1].get(), x[x > 1])
    for got, want in zip(kiln.nonzero(a > 1), np.nonzero(x > 1)):
        assert np.array_equal(got.get(), want)
    with pytest.raises(IndexError):
        a[kiln.asarray(np.ones(3, bool))]
    with pytest.raises(IndexError):
        a[np.array([0.5])]


def test_unique(kiln, rng):
    for n in SIZES:
        v = rng.integers(-20, 20, n).astype(np.int32)
        u, c = kiln.unique(kiln.asarray(v), return_counts=True)
        wu, wc = np.unique(v, return_counts=True)
        assert np.array_equal(u.get(), wu) and np.array_equal(c.get(), wc)


def test_topk(kiln, rng):
    x = rng.standard_normal((3, 257))
    v, i = kiln.topk(kiln.asarray(x), 5)
    assert np.array_equal(v.get(), -np.sort(-x, axis=1)[:, :5])
    assert np.array_equal(np.take_along_axis(x, i.get(), 1), v.get())
    v, _ = kiln.topk(kiln.asarray(x), 2, largest=False)
    assert np.array_equal(v.get(), np.sort(x, axis=1)[:, :2])
    with pytest.raises(kiln.KilnError):
        kiln.topk(kiln.asarray(x), 1000)


def test_histogram_bincount(kiln, rng):
    for n in (0, 1, 257, 4099):
        x = rng.standard_normal(n)
        h, e = kiln.histogram(kiln.asarray(x), 7, range=(-2, 2))
        wh, we = np.histogram(x, 7, range=(-2, 2))
        assert np.array_equal(h.get(), wh) and np.allclose(e, we)
        v = rng.integers(0, 30, n)
        assert np.array_equal(kiln.bincount(kiln.asarray(v), minlength=3).get(), np.bincount(v, minlength=3))
    x = rng.standard_normal(100)
    h, e = kiln.histogram(kiln.asarray(x), 10)
    assert np.array_equal(h.get(), np.histogram(x, 10)[0])
    with pytest.raises(kiln.KilnError):
        kiln.bincount(kiln.asarray([-1, 2]))
    with pytest.raises(kiln.KilnError):
        kiln.histogram(kiln.asarray(x), 0, range=(0, 1))


def test_put_add_at(kiln):
    z = kiln.zeros(5)
    kiln.put(z, [1, 3, 1], [7.0, 8.0, 9.0])
    w = np.zeros(5)
    np.put(w, [1, 3, 1], [7.0, 8.0, 9.0])
    assert np.array_equal(z.get(), w)
    with pytest.raises(IndexError):
        kiln.put(z, [5], [1.0])
    z = kiln.zeros(3, np.int32)
    kiln.add_at(z, [0, 0, 2, 0], [1, 1, 5, 1])
    assert z.get().tolist() == [3, 0, 5]


def test_linalg_norm(kiln, rng):
    x = rng.standard_normal(257)
    a = kiln.asarray(x)
    for o in (None, 1, 2, np.inf):
        assert np.isclose(float(kiln.linalg.norm(a, o)), np.linalg.norm(x, o))
    m = rng.standard_normal((4, 6))
    assert np.isclose(float(kiln.linalg.norm(kiln.asarray(m))), np.linalg.norm(m))
    assert np.isclose(float(kiln.linalg.vdot(kiln.asarray(m), kiln.asarray(m))), np.vdot(m, m))
    with pytest.raises(NotImplementedError):
        kiln.linalg.norm(kiln.asarray(m), 2)


@pytest.mark.parametrize("est", ["auto", "fd", "doane", "scott", "rice", "sturges", "sqrt"])
def test_histogram_bin_estimators(kiln, rng, est):
    """bins='auto' and NumPy's other estimators: the same counts and edges
    as np.histogram, with and without range, on awkward data."""
    cases = [
        (rng.standard_normal(1000), None),
        (rng.random(37), None),
        (rng.integers(-300, 300, 501), None),
        (rng.standard_normal(257), (-1.0, 0.5)),
        (np.full(9, 2.5), None),  # one value: the edges widen by 0.5
        (np.array([3.0]), None),
        (np.array([1.0, 2.0]), None),
        (rng.standard_normal(50), (5.0, 6.0)),  # nothing in range
    ]
    for x, rg in cases:
        want_h, want_e = np.histogram(x, bins=est, range=rg)
        got_h, got_e = kiln.histogram(kiln.asarray(x), bins=est, range=rg)
        assert len(got_e) == len(want_e), (est, x.size, rg)
        assert np.allclose(np.asarray(got_e), want_e, rtol=1e-12, atol=0), (est, x.size, rg)
        assert np.array_equal(got_h.get(), want_h), (est, x.size, rg)
    with pytest.raises(ValueError, match="valid estimator"):
        kiln.histogram(kiln.asarray(np.arange(4.0)), bins="nope")
    with pytest.raises(NotImplementedError, match="stone"):
        kiln.histogram(kiln.asarray(np.arange(4.0)), bins="stone")


@pytest.mark.parametrize("vdt", [np.float32, np.float64, np.int32, np.int64])
def test_reduce_by_key(kiln, rng, vdt):
    """kiln.reduce_by_key against a loop over runs of equal keys, at
    awkward sizes, every op; NaN propagates in min/max."""
    for n in (0, 1, 2, 257, 4099):
        keys = np.sort(rng.integers(0, max(n // 3, 1), n)).astype(np.int32)
        vals = (rng.standard_normal(n) * 10).astype(vdt) if vdt in (np.float32, np.float64) \
            else rng.integers(-5, 6, n).astype(vdt)
        starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1]]) if n else np.zeros(0, int)
        for op, f in (("sum", np.add), ("prod", np.multiply), ("min", np.minimum), ("max", np.maximum)):
            want = f.reduceat(vals, starts) if n else np.zeros(0, vdt)
            rk, rv = kiln.reduce_by_key(kiln.asarray(keys), kiln.asarray(vals), op)
            assert np.array_equal(rk.get(), keys[starts] if n else keys), (n, op)
            assert rv.get().dtype == np.dtype(vdt)
            atol = 1e-3 if vdt == np.float32 else 1e-9  # float32 sums of runs cancel
            assert np.allclose(rv.get(), want, rtol=1e-5, atol=atol), (n, op)
    v = np.array([1.0, np.nan, 3.0, 4.0])
    _, mins = kiln.reduce_by_key(kiln.asarray(np.array([0, 0, 1, 1])), kiln.asarray(v), "min")
    assert np.isnan(mins.get()[0]) and mins.get()[1] == 3.0
    with pytest.raises(ValueError, match="op must be"):
        kiln.reduce_by_key(kiln.asarray(np.zeros(2)), kiln.asarray(np.zeros(2)), "mean")
    with pytest.raises(ValueError, match="one length"):
        kiln.reduce_by_key(kiln.asarray(np.zeros(2)), kiln.asarray(np.zeros(3)))
