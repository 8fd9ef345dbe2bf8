import numpy as np
import pytest

from conftest import SIZES

DTYPES = [np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64, np.float32, np.float64]


def ref_data(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype.kind == "f":
        return rng.standard_normal(n).astype(dtype)
    lo, hi = (0, 50) if dtype.kind == "u" else (-50, 50)
    return rng.integers(lo, hi, n).astype(dtype)


def test_roundtrip_and_metadata(kiln, rng):
    for n in SIZES:
        x = rng.standard_normal(n).astype(np.float32)
        a = kiln.asarray(x)
        assert a.shape == (n,) and a.size == n and a.ndim == 1
        assert a.dtype == np.float32 and a.strides == (4,) and a.itemsize == 4
        assert np.array_equal(a.get(), x)
        assert np.array_equal(np.asarray(a), x)
        assert np.array_equal(a.to_numpy(), x)
    m = kiln.asarray(np.arange(12, dtype=np.int32).reshape(3, 4))
    assert m.shape == (3, 4) and m.strides == (16, 4) and m.nbytes == 48
    assert m.device == kiln.get_default_queue().device


def test_creation(kiln):
    assert np.array_equal(kiln.asarray([1, 2, 3]).get(), np.array([1, 2, 3]))
    assert kiln.asarray([1, 2, 3]).dtype == np.int64
    assert kiln.asarray([1.5]).dtype == np.float64
    s = kiln.asarray(3.5)
    assert s.shape == () and s.ndim == 0 and float(s) == 3.5
    assert np.array_equal(kiln.zeros((2, 3), np.int16).get(), np.zeros((2, 3), np.int16))
    assert np.array_equal(kiln.ones(5).get(), np.ones(5))
    assert np.array_equal(kiln.full((2, 2), 7, np.uint8).get(), np.full((2, 2), 7, np.uint8))
    assert np.array_equal(kiln.arange(10).get(), np.arange(10))
    assert np.allclose(kiln.arange(0, 1, 0.25).get(), np.arange(0, 1, 0.25))
    assert kiln.empty((0, 3)).shape == (0, 3)
    b = kiln.asarray(np.array([True, False, True]))
    assert b.dtype == np.bool_ and b.get().tolist() == [True, False, True]
    with pytest.raises(TypeError):
        kiln.asarray(np.array(["a", "b"]))
    with pytest.raises(TypeError):
        kiln.asarray([object()])


@pytest.mark.parametrize("name,op", [("add", np.add), ("subtract", np.subtract),
                                     ("multiply", np.multiply), ("maximum", np.maximum),
                                     ("minimum", np.minimum)])
def test_binary_same_dtype(kiln, rng, name, op):
    for dt in (np.int32, np.float32, np.float64):
        for n in (0, 1, 257):
            x, y = ref_data(rng, n, dt), ref_data(rng, n, dt)
            r = getattr(kiln, name)(kiln.asarray(x), kiln.asarray(y))
            e = op(x, y)
            assert r.dtype == e.dtype
            assert np.allclose(r.get(), e)


def test_operators(kiln, rng):
    x = rng.standard_normal(127).astype(np.float32)
    y = rng.standard_normal(127).astype(np.float32) + 3
    a, b = kiln.asarray(x), kiln.asarray(y)
    for got, want in [(a + b, x + y), (a - b, x - y), (a * b, x * y), (a / b, x / y),
                      (a + 2, x + 2), (2 + a, 2 + x), (a - 1.5, x - 1.5), (1.5 - a, 1.5 - x),
                      (a * 3, x * 3), (a / 4, x / 4), (4 / b, 4 / y), (-a, -x), (abs(a), abs(x)),
                      (+a, x)]:
        assert got.dtype == want.dtype, (got.dtype, want.dtype)
        assert np.allclose(got.get(), want, rtol=1e-6)
    for got, want in [(a < b, x < y), (a <= 0, x <= 0), (a > 0.5, x > 0.5), (a >= b, x >= y),
                      (a == a, x == x), (a != b, x != y), (0 < a, 0 < x), (1 > a, 1 > x)]:
        assert got.dtype == np.bool_
        assert np.array_equal(got.get(), want)


def test_promotion(kiln, rng):
    pairs = [(np.int8, np.uint8), (np.int32, np.float32), (np.int64, np.uint64),
             (np.int16, np.int32), (np.float32, np.float64), (np.uint8, np.float32)]
    for da, db in pairs:
        x, y = ref_data(rng, 31, da), ref_data(rng, 31, db)
        r = kiln.asarray(x) + kiln.asarray(y)
        e = x + y
        assert r.dtype == e.dtype, (da, db, r.dtype, e.dtype)
        assert np.allclose(r.get(), e)
    # NumPy 2 weak Python scalars
    i = kiln.asarray(np.arange(5, dtype=np.int16))
    assert (i + 1).dtype == np.int16
    assert (i + 1.5).dtype == np.float64 and np.allclose((i + 1.5).get(), np.arange(5) + 1.5)
    assert (i / 2).dtype == np.float64 and np.allclose((i / 2).get(), np.arange(5) / 2)
    f = kiln.asarray(np.ones(3, np.float32))
    assert (f * 2).dtype == np.float32 and (f + 2.5).dtype == np.float32
    with pytest.raises(OverflowError):
        kiln.asarray(np.arange(3, dtype=np.int8)) + 1000
    # numpy operands
    assert np.allclose((f + np.arange(3.0)).get(), 1 + np.arange(3.0))
    assert (f + np.arange(3.0)).dtype == np.float64


def test_broadcasting(kiln, rng):
    x = rng.standard_normal((4, 1, 5))
    y = rng.standard_normal((3, 1))
    r = kiln.asarray(x) * kiln.asarray(y)
    assert r.shape == (4, 3, 5)
    assert np.allclose(r.get(), x * y)
    with pytest.raises(kiln.MismatchError) as e:
        kiln.asarray(np.ones(3)) + kiln.asarray(np.ones(4))
    assert "(3)" in str(e.value) or "3" in str(e.value)
    assert isinstance(e.value, ValueError)


def test_unary(kiln, rng):
    x = np.abs(rng.standard_normal(257)) + 0.1
    a = kiln.asarray(x)
    for name in ("sqrt", "exp", "log", "sin", "cos", "negative", "absolute"):
        assert np.allclose(getattr(kiln, name)(a).get(), getattr(np, name)(x)), name
    i = kiln.asarray(np.arange(1, 6, dtype=np.int32))
    r = kiln.sqrt(i)
    assert r.dtype == np.float64 and np.allclose(r.get(), np.sqrt(np.arange(1, 6)))
    assert np.array_equal(abs(kiln.asarray([-3, 4])).get(), [3, 4])


def test_ufunc_and_function_protocols(kiln):
    a = kiln.asarray(np.arange(5.0))
    r = np.add(a, 1)
    assert isinstance(r, kiln.Array) and np.allclose(r.get(), np.arange(5.0) + 1)
    r = np.arange(5.0) + a  # numpy on the left: runs on the device
    assert isinstance(r, kiln.Array)
    assert isinstance(np.sqrt(a), kiln.Array)
    assert isinstance(np.sum(a), kiln.Array) and float(np.sum(a)) == 10.0
    assert isinstance(np.arctan2(a, a), kiln.Array)  # kiln_array_binary_out's ATAN2
    with pytest.raises(TypeError):
        np.fmod(a, a)  # not on the device: raises, never copies silently
    with pytest.raises(TypeError):
        np.fft.fft(a) if False else np.cumsum(a, axis=0, out=np.empty(5))


def test_astype(kiln, rng):
    x = rng.standard_normal(31) * 100
    a = kiln.asarray(x)
    for dt in (np.int32, np.uint8, np.float32, np.int64, np.float16):
        r = a.astype(dt)
        assert r.dtype == dt
        if np.dtype(dt).kind == "f":
            assert np.allclose(r.get(), x.astype(dt), rtol=1e-3)
    assert np.array_equal(kiln.asarray([1.7, -2.9]).astype(np.int32).get(), [1, -2])
    assert kiln.asarray([0.0, 2.0]).astype(bool).get().tolist() == [False, True]


@pytest.mark.parametrize("n", [0, 1, 7, 257, 4099])
def test_reductions_flat(kiln, rng, n):
    x = rng.standard_normal(n)
    a = kiln.asarray(x)
    assert np.isclose(float(a.sum()), x.sum())
    assert np.isclose(float(kiln.sum(a, initial=5.0)), x.sum() + 5.0)
    if n:
        assert float(a.min()) == x.min() and float(a.max()) == x.max()
        assert int(a.argmin()) == x.argmin() and int(a.argmax()) == x.argmax()
        assert np.isclose(float(a.mean()), x.mean())
        assert np.isclose(float(a.var()), x.var()) and np.isclose(float(a.std(ddof=1) if n > 1 else 0), x.std(ddof=1) if n > 1 else 0)
    else:
        with pytest.raises(ValueError):
            a.max()
    assert bool((a > 0).any()) == bool((x > 0).any())
    assert bool((a > -10).all()) == bool((x > -10).all())
    i = kiln.asarray(np.arange(n, dtype=np.int32))
    s = i.sum()
    assert s.dtype == np.int64 and int(s) == np.arange(n).sum()


def test_reductions_axis(kiln, rng):
    x = rng.standard_normal((5, 7, 3))
    a = kiln.asarray(x)
    for axis in (0, 1, 2, -1, (0, 2), (0, 1, 2), None):
        for keep in (False, True):
            for name in ("sum", "max", "min", "mean", "prod"):
                got = getattr(a, name)(axis=axis, keepdims=keep)
                want = getattr(x, name)(axis=axis, keepdims=keep)
                assert got.shape == np.shape(want), (name, axis, keep)
                assert np.allclose(got.get(), want), (name, axis, keep)
    for axis in (0, 1, 2):
        assert np.array_equal(a.argmax(axis=axis).get(), x.argmax(axis=axis))
        assert np.allclose(a.var(axis=axis, ddof=1).get(), x.var(axis=axis, ddof=1))
        assert np.allclose(a.std(axis=axis).get(), x.std(axis=axis))
    assert np.allclose(kiln.max(a, axis=0, initial=0.5).get(), np.max(x, axis=0, initial=0.5))
    with pytest.raises((IndexError, ValueError)):
        a.sum(axis=3)


def test_indexing(kiln):
    x = np.arange(60).reshape(3, 4, 5)
    a = kiln.asarray(x)
    for key in [1, -1, (1, 2), (1, 2, 3), slice(None), slice(1, 3), (slice(None), 2),
                (Ellipsis, 1), (0, Ellipsis), (slice(None, None, -1),), (slice(None), slice(None, None, 2)),
                (None, 1), (1, None, slice(1, 3)), (slice(5, 1),), (slice(None), slice(3, 0, -2), 4)]:
        got = a[key]
        want = x[key]
        assert got.shape == np.shape(want), key
        assert np.array_equal(np.asarray(got.get()), want), key
    assert int(a[1, 2, 3]) == x[1, 2, 3]
    with pytest.raises(IndexError):
        a[3]
    with pytest.raises(IndexError):
        a[0, 0, 0, 0]
    v = kiln.asarray(np.arange(10) * 10)
    assert np.array_equal(v[[3, 1, -1]].get(), [30, 10, 90])
    assert np.array_equal(v[kiln.asarray([0, 9])].get(), [0, 90])
    with pytest.raises(IndexError):
        v[[10]]
    assert len(v) == 10 and [int(t) for t in kiln.asarray([1, 2])] == [1, 2]


def test_setitem(kiln):
    x = np.zeros((4, 5))
    a = kiln.asarray(x)
    a[1] = 3
    x[1] = 3
    a[:, 2] = np.arange(4)
    x[:, 2] = np.arange(4)
    a[2:, ::2] = kiln.asarray([7.0, 8.0, 9.0])
    x[2:, ::2] = [7.0, 8.0, 9.0]
    a[0, 0] = -1
    x[0, 0] = -1
    assert np.array_equal(a.get(), x)
    m = a > 2
    a[m] = 0.5
    x[x > 2] = 0.5
    assert np.array_equal(a.get(), x)
    b = kiln.asarray(np.arange(6.0))
    b[b > 2] = kiln.asarray([10.0, 11.0, 12.0])
    assert b.get().tolist() == [0, 1, 2, 10, 11, 12]
    a += 1
    x += 1
    a *= 2
    x *= 2
    assert np.array_equal(a.get(), x)
    with pytest.raises(TypeError):
        i = kiln.asarray([1, 2])
        i += 1.5


def test_views(kiln):
    x = np.arange(24.0).reshape(4, 6)
    a = kiln.asarray(x)
    assert np.array_equal(a.T.get(), x.T)
    assert np.array_equal(a.reshape(6, 4).get(), x.reshape(6, 4))
    assert np.array_equal(a.reshape(-1).get(), x.reshape(-1))
    assert np.array_equal(a.T.reshape(24).get(), x.T.reshape(24))  # copies a strided view
    assert np.array_equal(a.transpose(1, 0).copy().get(), x.T)
    assert np.array_equal(kiln.swapaxes(a, 0, 1).get(), x.swapaxes(0, 1))
    assert np.array_equal(kiln.broadcast_to(kiln.asarray([1.0, 2.0]), (3, 2)).get(),
                          np.broadcast_to([1.0, 2.0], (3, 2)))
    with pytest.raises(ValueError):
        a.reshape(5, 5)


def test_sort(kiln, rng):
    cases = [(n, dt) for n in SIZES for dt in (np.int32, np.float64)]
    cases += [(257, np.float32), (31, np.uint8)]
    for n, dt in cases:
        x = ref_data(rng, n, dt)
        a = kiln.asarray(x)
        assert np.array_equal(kiln.sort(a).get(), np.sort(x))
        assert np.array_equal(kiln.argsort(a).get(), np.argsort(x, kind="stable"))
    x = rng.standard_normal((3, 17))
    a = kiln.asarray(x)
    assert np.array_equal(kiln.sort(a).get(), np.sort(x, axis=-1))
    assert np.array_equal(kiln.sort(a, axis=0).get(), np.sort(x, axis=0))
    assert np.array_equal(kiln.sort(a, axis=None).get(), np.sort(x, axis=None))
    assert np.array_equal(kiln.sort(kiln.asarray([3, 1, 2]), descending=True).get(), [3, 2, 1])
    s = np.sort(rng.standard_normal(100))
    v = rng.standard_normal(33)
    assert np.array_equal(kiln.searchsorted(kiln.asarray(s), kiln.asarray(v)).get(), np.searchsorted(s, v))


def test_where_take_clip(kiln, rng):
    x = rng.standard_normal(257)
    a = kiln.asarray(x)
    assert np.array_equal(kiln.where(a > 0, a, 0.0).get(), np.where(x > 0, x, 0.0))
    assert np.array_equal(kiln.where(a > 0, 1, a).get(), np.where(x > 0, 1, x))
    c = kiln.where(kiln.asarray([True, False]), kiln.asarray([1, 2], ), kiln.asarray([0.5, 0.5]))
    assert c.dtype == np.float64 and c.get().tolist() == [1.0, 0.5]
    idx = rng.integers(-257, 257, 50)
    assert np.array_equal(kiln.take(a, idx).get(), np.take(x, idx))
    assert np.array_equal(kiln.take(a, idx + 500, mode="clip").get(), np.take(x, idx + 500, mode="clip"))
    assert np.array_equal(kiln.take(a, idx + 500, mode="wrap").get(), np.take(x, idx + 500, mode="wrap"))
    with pytest.raises(IndexError):
        kiln.take(a, [1000])
    with pytest.raises(IndexError):
        kiln.take(a, [1.5])
    assert np.array_equal(kiln.clip(a, -0.5, 0.5).get(), np.clip(x, -0.5, 0.5))
    assert np.array_equal(a.clip(None, 0).get(), x.clip(None, 0))


def test_concatenate_stack(kiln, rng):
    x, y = rng.standard_normal((3, 4)), rng.standard_normal((2, 4))
    assert np.array_equal(kiln.concatenate([kiln.asarray(x), kiln.asarray(y)]).get(), np.concatenate([x, y]))
    assert np.array_equal(kiln.concatenate([kiln.asarray(x.T), kiln.asarray(y.T)], axis=1).get(),
                          np.concatenate([x.T, y.T], axis=1))
    assert np.array_equal(kiln.concatenate([kiln.asarray(x), y], axis=None).get(), np.concatenate([x, y], axis=None))
    assert np.array_equal(kiln.stack([kiln.asarray(x), kiln.asarray(x)], axis=1).get(), np.stack([x, x], axis=1))
    r = kiln.concatenate([kiln.asarray([1, 2]), kiln.asarray([0.5])])
    assert r.dtype == np.float64
    with pytest.raises(kiln.MismatchError):
        kiln.concatenate([kiln.asarray(x), kiln.asarray(y.T)])
    with pytest.raises(ValueError):
        kiln.concatenate([])


def test_cumsum(kiln):
    for n in (0, 1, 257, 4099):
        x = np.arange(n, dtype=np.int32) % 7
        assert np.array_equal(kiln.cumsum(kiln.asarray(x)).get(), np.cumsum(x))
    x = np.linspace(0.5, 1.5, 9)
    assert np.allclose(kiln.cumprod(kiln.asarray(x)).get(), np.cumprod(x))
    assert np.array_equal(kiln.asarray(np.ones((2, 3))).cumsum().get(), np.ones((2, 3)).cumsum())


def test_matmul(kiln, rng):
    for (m, k, n) in [(1, 1, 1), (4, 3, 5), (17, 31, 7)]:
        x = rng.standard_normal((m, k)).astype(np.float32)
        y = rng.standard_normal((k, n)).astype(np.float32)
        try:
            r = kiln.asarray(x) @ kiln.asarray(y)
        except kiln.UnsupportedError as e:
            pytest.skip(f"no BLAS for this device: {e}")
        assert r.shape == (m, n)
        assert np.allclose(r.get(), x @ y, atol=1e-4)
    x = rng.standard_normal((2, 3, 4))
    y = rng.standard_normal((4, 5))
    assert np.allclose((kiln.asarray(x) @ kiln.asarray(y)).get(), x @ y)
    v = rng.standard_normal(4)
    assert np.allclose((kiln.asarray(y.T) @ kiln.asarray(v)).get(), y.T @ v)
    assert np.isclose(float(kiln.dot(kiln.asarray(v), kiln.asarray(v))), v @ v)
    with pytest.raises(ValueError):
        kiln.asarray(x) @ kiln.asarray(v[:3])
    with pytest.raises(TypeError):
        kiln.asarray([[1, 2]]) @ kiln.asarray([[1], [2]])


def test_scalar_conversions(kiln):
    a = kiln.asarray([2.5])
    assert float(a) == 2.5 and int(kiln.asarray([3])) == 3 and bool(kiln.asarray([1]))
    assert kiln.asarray([4]).item() == 4 and kiln.asarray([[1, 2]]).tolist() == [[1, 2]]
    with pytest.raises(ValueError):
        bool(kiln.asarray([1, 2]))
    with pytest.raises(TypeError):
        float(kiln.asarray([1.0, 2.0]))
    assert "kiln.Array" in repr(a) and f"{kiln.asarray(1.5):.2f}" == "1.50"
    with pytest.raises(TypeError):
        hash(a)


def test_dims_beyond_c_limit_raise(kiln):
    # whatever the C library's rank limit, beyond it is an exception
    x = np.zeros((1,) * 9)
    with pytest.raises((ValueError, kiln.KilnError)):
        kiln.asarray(x)


def test_many_temporaries_no_growth(kiln):
    a = kiln.asarray(np.ones(1000, np.float32))
    for _ in range(50):
        (a + a) * 2
    kiln.finish()
    s0 = kiln.get_pool_stats()["bytes_in_use"]
    for _ in range(2000):
        (a + a) * 2
    kiln.finish()
    assert kiln.get_pool_stats()["bytes_in_use"] <= s0 + 64 * 1024


def test_array_api_names(kiln):
    x = np.arange(24.0).reshape(2, 3, 4)
    a = kiln.asarray(x)
    y = x[0]  # 2-D: expand_dims stays within every kiln's ranks
    b = kiln.asarray(y)
    assert np.array_equal(kiln.expand_dims(b, 1).get(), np.expand_dims(y, 1))
    assert np.array_equal(kiln.expand_dims(b, -1).get(), np.expand_dims(y, -1))
    assert np.array_equal(kiln.squeeze(kiln.expand_dims(b, 0)).get(), y)
    assert np.array_equal(kiln.squeeze(kiln.asarray(np.ones((1, 3, 1))), axis=0).get(), np.ones((3, 1)))
    with pytest.raises(ValueError):
        kiln.squeeze(a, axis=0)
    for ax in (None, 0, 1, (0, 2), -1):
        assert np.array_equal(kiln.flip(a, ax).get(), np.flip(x, ax)), ax
    assert np.array_equal(kiln.permute_dims(a, (2, 0, 1)).get(), np.transpose(x, (2, 0, 1)))
    assert np.array_equal(kiln.matrix_transpose(a).get(), np.swapaxes(x, -1, -2))
    assert np.array_equal(kiln.concat([a, a], axis=2).get(), np.concatenate([x, x], axis=2))
    assert np.allclose(kiln.linspace(0, 1, 7).get(), np.linspace(0, 1, 7))
    assert np.array_equal(kiln.eye(3, 4, 1).get(), np.eye(3, 4, 1))
    assert kiln.isdtype(np.float32, "real floating") and not kiln.isdtype(np.int8, "real floating")
    assert kiln.__array_api_version__


@pytest.mark.parametrize("shape", [(5,), (5, 7), (4, 3, 6), (2, 3, 131, 2)])
def test_index_arrays_per_axis(kiln, rng, shape):
    """a[i, j, ...] with one integer array per leading axis (one C call:
    kiln_array_index_many) against NumPy: broadcasting, negatives, dtypes,
    lists, empty; out of an axis's range and shapes that do not broadcast
    raise IndexError as in NumPy."""
    x = rng.standard_normal(shape).astype(np.float32)
    a = kiln.asarray(x)
    dts = (np.int8, np.int32, np.int64, np.uint16)
    for k in range(1, len(shape) + 1):
        for trial in range(3):
            shp = [(4, 1), (3,), (1, 3), (2, 4, 1)][(trial + k) % 4]
            key = []
            for d in range(k):
                lo = 0 if dts[(d + trial) % 4] == np.uint16 else -shape[d]
                s = shp if d % 2 == 0 else shp[-1:]
                key.append(rng.integers(lo, shape[d], size=s).astype(dts[(d + trial) % 4]))
            key = tuple(key)
            got = a[tuple(kiln.asarray(v) for v in key)].get()
            want = x[key]
            assert got.shape == want.shape and np.array_equal(got, want), (shape, k, trial)
    two = tuple([0, -1] for _ in shape[:2])
    assert np.array_equal(a[two].get(), x[two])  # lists
    empty = tuple(np.zeros(0, np.int64) for _ in shape[:2])
    assert a[empty].get().shape == x[empty].shape
    bad = list(two)
    bad[-1] = [0, shape[len(bad) - 1]]  # one past the end of its own axis
    with pytest.raises(IndexError):
        a[tuple(bad)]
    if len(shape) >= 2:
        with pytest.raises(IndexError):
            a[np.array([0, 1, 2]), np.array([0, 1])]


def test_index_arrays_with_newaxis(kiln, rng):
    """None (newaxis) mixed with integer arrays, slices, ints and '...',
    against NumPy's results and shapes (get and set)."""
    x = rng.standard_normal((4, 5, 3)).astype(np.float32)
    a = kiln.asarray(x)
    i = np.array([0, 2, -1])  # valid on every axis
    j = np.array([[1], [4]])
    keys = [
        (None, i), (i, None), (None, i, None), (i, None, j), (None, Ellipsis, i),
        (i, Ellipsis, None), (slice(1, 3), None, i), (None, 2, i), (i, j, None, 1),
        (None, None, i, slice(None, None, -1)), (Ellipsis, None, i), (1, None, i, None),
    ]
    for key in keys:
        want = x[key]
        kkey = tuple(kiln.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        got = a[kkey].get()
        assert got.shape == want.shape and np.array_equal(got, want), key
    # assignment through the same keys writes what NumPy writes
    for key in [(None, i), (i, None, j), (Ellipsis, None, i)]:
        y, b = x.copy(), kiln.asarray(x)
        y[key] = 7.0
        b[key] = 7.0
        assert np.array_equal(b.get(), y), key
    with pytest.raises(IndexError):
        a[None, np.array([4])]  # out of the axis's range


@pytest.mark.parametrize("shape", [(4, 5), (3, 1, 6), (2, 3, 4, 5)])
def test_argsort_take_along_any_axis(kiln, rng, shape):
    """argsort / argpartition along every axis (with ties: the stable
    order), np.take along every axis with raise/clip/wrap, against NumPy."""
    x = rng.integers(0, 4, shape).astype(np.float32)  # many ties
    a = kiln.asarray(x)
    for axis in range(-len(shape), len(shape)):
        want = np.argsort(x, axis=axis, kind="stable")
        assert np.array_equal(kiln.argsort(a, axis=axis).get(), want), axis
        got = kiln.argpartition(a, 0, axis=axis).get()
        assert np.array_equal(got, want), axis  # the sorted one of the valid partitions
        n = shape[axis]
        for mode in ("raise", "clip", "wrap"):
            lo, hi = (-n, n) if mode == "raise" else (-2 * n - 1, 2 * n + 2)
            idx = rng.integers(lo, hi, (2, 3))
            got = kiln.take(a, kiln.asarray(idx), axis=axis, mode=mode).get()
            assert np.array_equal(got, np.take(x, idx, axis=axis, mode=mode)), (axis, mode)
        got = kiln.take(a, n - 1, axis=axis).get()  # a scalar index drops the axis
        assert np.array_equal(got, np.take(x, n - 1, axis=axis))
    with pytest.raises(IndexError):
        kiln.take(a, kiln.asarray(np.array([shape[0]])), axis=0)  # raise mode: out of range
    with pytest.raises(np.exceptions.AxisError):
        kiln.argsort(a, axis=len(shape))
    with pytest.raises(np.exceptions.AxisError):
        kiln.take(a, [0], axis=-len(shape) - 1)


def test_var_std_over_several_axes(kiln, rng):
    x = rng.standard_normal((3, 4, 5, 2))
    a = kiln.asarray(x)
    for axes in [(0, 1), (1, 3), (0, 2, 3), (-1, 0), (2, 1)]:
        for keepdims in (False, True):
            for ddof in (0, 1):
                got = kiln.var(a, axis=axes, ddof=ddof, keepdims=keepdims).get()
                want = np.var(x, axis=axes, ddof=ddof, keepdims=keepdims)
                assert got.shape == want.shape and np.allclose(got, want, rtol=1e-12), (axes, keepdims)
                got = kiln.std(a, axis=axes, ddof=ddof, keepdims=keepdims).get()
                assert np.allclose(got, np.std(x, axis=axes, ddof=ddof, keepdims=keepdims), rtol=1e-12)


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint32, np.float32, np.float64, np.int8, np.bool_])
def test_cumsum_cumprod_along_axis(kiln, rng, dtype):
    x = rng.integers(0, 3, (4, 7, 3)).astype(dtype)
    a = kiln.asarray(x)
    for axis in (0, 1, 2, -1, -3):
        for f in ("cumsum", "cumprod"):
            want = getattr(np, f)(x, axis=axis)
            got = getattr(kiln, f)(a, axis=axis).get()
            assert got.dtype == want.dtype and got.shape == want.shape, (f, axis)
            assert np.allclose(got, want, rtol=1e-6), (f, axis)
    empty = kiln.asarray(np.zeros((0, 3), dtype))
    assert kiln.cumsum(empty, axis=1).get().shape == (0, 3)
    with pytest.raises(np.exceptions.AxisError):
        kiln.cumsum(a, axis=3)


def test_integer_array_assignment_into_views(kiln, rng):
    """a[idx] = v through integer arrays on non-contiguous views (strided,
    transposed) writes what NumPy writes, and only there."""
    x = rng.standard_normal((6, 8)).astype(np.float32)
    cases = [
        (lambda t: t[:, ::2], (np.array([0, 3, 5]),)),
        (lambda t: t.T, (np.array([1, 7]), slice(None))),
        (lambda t: t[1:5, 1::3], (slice(None), np.array([[0], [2]]))),
        (lambda t: t[::-1], (np.array([0, -1]), np.array([2, 3]))),
    ]
    for view, key in cases:
        y, a = x.copy(), kiln.asarray(x)
        kkey = tuple(kiln.asarray(k) if isinstance(k, np.ndarray) else k for k in key)
        vy, va = view(y), view(a)
        vy[key] = 9.0
        va[kkey] = 9.0
        assert np.array_equal(a.get(), y), key
        vals = rng.standard_normal(vy[key].shape).astype(np.float32)
        vy[key] = vals
        va[kkey] = kiln.asarray(vals)
        assert np.array_equal(a.get(), y), key
