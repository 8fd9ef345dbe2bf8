"""Array API conformance, our own subset (issue 44 item 4): property tests
with hypothesis against NumPy as the reference, on the default device.
The full data-apis array-api-tests run is by hand (docs/python.md).
Derandomized, few examples: the same cases each run, cheap on PoCL."""
import numpy as np
import pytest

hyp = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402
from hypothesis.extra import numpy as hnp  # noqa: E402

import kiln  # noqa: E402

SETTINGS = settings(max_examples=8, deadline=None, derandomize=True, database=None)
INT_DTYPES = [np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64]
FLOAT_DTYPES = [np.float32, np.float64]
SIZES = [0, 1, 2, 3, 7, 17, 31, 33]


def shapes():
    return st.one_of(st.just(()), st.lists(st.sampled_from(SIZES), min_size=1, max_size=3).map(tuple))


def arrays(dtypes, shape=None, elements=None):
    return st.sampled_from(dtypes).flatmap(
        lambda dt: hnp.arrays(dt, shape if shape is not None else shapes(), elements=elements))


def same(r, e, exact=True):
    got = np.asarray(r.get() if isinstance(r, kiln.Array) else r)
    e = np.asarray(e)
    assert got.shape == e.shape, (got.shape, e.shape)
    assert got.dtype == e.dtype, (got.dtype, e.dtype)
    if exact or e.dtype.kind in "biu":
        assert np.array_equal(got, e, equal_nan=e.dtype.kind in "fc"), (got, e)
    else:
        assert np.allclose(got, e, rtol=1e-5 if e.dtype == np.float32 else 1e-12, atol=1e-30,
                           equal_nan=True), (got, e)


def test_namespace():
    a = kiln.asarray([1.0, 2.0])
    assert a.__array_namespace__() is kiln
    info = kiln.__array_namespace_info__()
    assert info.default_dtypes()["real floating"] == np.float64
    assert "float32" in info.dtypes() and "bool" in info.dtypes()
    assert kiln.finfo(kiln.float32).eps == np.finfo(np.float32).eps
    assert kiln.iinfo(kiln.int8).max == 127
    assert kiln.result_type(kiln.int8, kiln.uint8) == np.int16
    assert kiln.result_type(kiln.float32, 1.0) == np.float32
    assert kiln.can_cast(kiln.int8, kiln.int16) and not kiln.can_cast(kiln.float64, kiln.int8)
    assert kiln.isdtype(kiln.float32, "real floating")
    assert kiln.bool is np.bool_
    with pytest.raises(TypeError):
        kiln.result_type(kiln.int64, kiln.uint64)


# NumPy's function beside each name of the standard (integer operands)
INT_BINARY = ["add", "subtract", "multiply", "floor_divide", "remainder", "maximum", "minimum",
              "bitwise_and", "bitwise_or", "bitwise_xor", "equal", "less", "greater_equal"]


@SETTINGS
@given(arrays(INT_DTYPES), st.data())
def test_integer_binary(x, data):
    y = data.draw(hnp.arrays(x.dtype, x.shape), label="y")
    name = data.draw(st.sampled_from(INT_BINARY), label="op")
    f = getattr(kiln, name)
    if name in ("floor_divide", "remainder"):
        y = np.where(y == 0, 1, y).astype(x.dtype)  # NumPy warns; kiln gives 0 (docs/api.md)
    same(f(kiln.asarray(x), kiln.asarray(y)), getattr(np, name)(x, y))


@SETTINGS
@given(arrays(INT_DTYPES), st.integers(0, 7))
def test_shifts_and_invert(x, s):
    a = kiln.asarray(x)
    same(a << s, x << x.dtype.type(s))
    same(a >> s, x >> x.dtype.type(s))
    same(~a, ~x)
    same(kiln.bitwise_invert(a), np.bitwise_invert(x))


FLOAT_UNARY = ["sqrt", "exp", "log", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh",
               "tanh", "asinh", "acosh", "atanh", "log1p", "expm1", "log2", "log10", "floor",
               "ceil", "trunc", "round", "sign", "square", "abs", "negative", "isnan", "isinf",
               "isfinite", "signbit"]


@SETTINGS
@given(arrays(FLOAT_DTYPES, elements={"allow_subnormal": False}), st.sampled_from(FLOAT_UNARY))
def test_float_unary(x, name):
    with np.errstate(all="ignore"):
        e = getattr(np, name)(x)
    exact = name in ("floor", "ceil", "trunc", "round", "sign", "abs", "negative", "isnan", "isinf",
                     "isfinite", "signbit", "square")
    same(getattr(kiln, name)(kiln.asarray(x)), e, exact)


FLOAT_BINARY = ["add", "subtract", "multiply", "divide", "pow", "atan2", "hypot", "copysign",
                "logaddexp", "floor_divide", "remainder", "maximum", "minimum", "not_equal",
                "less_equal"]


@SETTINGS
@given(arrays(FLOAT_DTYPES, elements={"allow_subnormal": False, "min_value": -1e6, "max_value": 1e6}),
       st.data())
def test_float_binary(x, data):
    y = data.draw(hnp.arrays(x.dtype, x.shape, elements={"allow_subnormal": False,
                                                        "min_value": -1e6, "max_value": 1e6}))
    name = data.draw(st.sampled_from(FLOAT_BINARY), label="op")
    with np.errstate(all="ignore"):
        e = getattr(np, name)(x, y)
    same(getattr(kiln, name)(kiln.asarray(x), kiln.asarray(y)), e,
         name in ("maximum", "minimum", "not_equal", "less_equal", "copysign"))


@SETTINGS
@given(arrays(FLOAT_DTYPES + INT_DTYPES[:4]), st.data())
def test_broadcast_and_weak_scalars(x, data):
    s = data.draw(st.integers(-3, 3) if x.dtype.kind in "iu" else st.floats(-3, 3), label="scalar")
    a = kiln.asarray(x)
    with np.errstate(all="ignore"):
        same(a * s, x * s, False)
        same(s - a, s - x, False)
        row = x.reshape(-1)[:1].reshape((1,) * x.ndim) if x.size else x
        same(a + kiln.asarray(row), x + row, False)


@SETTINGS
@given(hnp.arrays(np.bool_, shapes()), st.data())
def test_bools(x, data):
    y = data.draw(hnp.arrays(np.bool_, x.shape))
    a, b = kiln.asarray(x), kiln.asarray(y)
    for name in ("logical_and", "logical_or", "logical_xor", "bitwise_and", "bitwise_or",
                 "bitwise_xor", "equal"):
        same(getattr(kiln, name)(a, b), getattr(np, name)(x, y))
    same(kiln.logical_not(a), np.logical_not(x))
    same(~a, ~x)
    same(a & b, x & y)
    same(a | b, x | y)


@SETTINGS
@given(arrays(FLOAT_DTYPES + [np.int32, np.int64], shape=hnp.array_shapes(min_dims=1, max_dims=3,
                                                                       min_side=1, max_side=9),
              elements={"min_value": -100, "max_value": 100}),
       st.data())
def test_reductions(x, data):
    axis = data.draw(st.one_of(st.none(), st.integers(-x.ndim, x.ndim - 1)), label="axis")
    keep = data.draw(st.booleans(), label="keepdims")
    a = kiln.asarray(x)
    same(kiln.sum(a, axis=axis, keepdims=keep), np.sum(x, axis=axis, keepdims=keep), False)
    same(kiln.max(a, axis=axis, keepdims=keep), np.max(x, axis=axis, keepdims=keep))
    same(kiln.min(a, axis=axis, keepdims=keep), np.min(x, axis=axis, keepdims=keep))
    if x.dtype.kind == "f":
        same(kiln.mean(a, axis=axis, keepdims=keep), np.mean(x, axis=axis, keepdims=keep), False)
        same(kiln.var(a, axis=axis, correction=1, keepdims=keep) if x.size > 1 else
             kiln.var(a, axis=axis, keepdims=keep),
             np.var(x, axis=axis, ddof=1 if x.size > 1 else 0, keepdims=keep), False)


@SETTINGS
@given(arrays([np.float32, np.int32], shape=hnp.array_shapes(min_dims=1, max_dims=3, min_side=0,
                                                              max_side=7)), st.data())
def test_manipulation(x, data):
    a = kiln.asarray(x)
    ax = data.draw(st.integers(-x.ndim, x.ndim - 1), label="axis")
    shift = data.draw(st.integers(-9, 9), label="shift")
    same(kiln.roll(a, shift, axis=ax), np.roll(x, shift, axis=ax))
    same(kiln.roll(a, shift), np.roll(x, shift))
    same(kiln.flip(a, axis=ax), np.flip(x, axis=ax))
    same(kiln.moveaxis(a, ax, 0), np.moveaxis(x, ax, 0))
    same(kiln.repeat(a, 2, axis=ax), np.repeat(x, 2, axis=ax))
    same(kiln.tile(a, (2,) * x.ndim), np.tile(x, (2,) * x.ndim))
    same(kiln.expand_dims(a, axis=0), np.expand_dims(x, 0))
    same(kiln.concat([a, a], axis=ax), np.concatenate([x, x], axis=ax))
    same(kiln.stack([a, a], axis=0), np.stack([x, x]))
    if x.shape[ax]:
        idx = data.draw(hnp.arrays(np.int64, data.draw(st.sampled_from([0, 1, 5])),
                                   elements=st.integers(-x.shape[ax], x.shape[ax] - 1)))
        same(kiln.take(a, kiln.asarray(idx), axis=ax), np.take(x, idx, axis=ax))
    for u, e in zip(kiln.unstack(a, axis=ax), [np.take(x, i, axis=ax) for i in range(x.shape[ax])]):
        same(u, e)
    if x.ndim >= 2:
        same(kiln.tril(a, k=1), np.tril(x, 1))
        same(kiln.triu(a), np.triu(x))
        same(kiln.matrix_transpose(a), np.swapaxes(x, -1, -2))


@SETTINGS
@given(hnp.arrays(np.int32, st.sampled_from([(0,), (1,), (7,), (33,)]), elements=st.integers(-3, 3)))
def test_sets_and_sorting(x):
    a = kiln.asarray(x)
    v, idx, inv, cnt = kiln.unique_all(a)
    ev, eidx, einv, ecnt = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    same(v, ev)
    same(idx, eidx.astype(np.int64))
    same(inv, einv.reshape(x.shape).astype(np.int64))
    same(cnt, ecnt.astype(np.int64))
    same(kiln.unique_values(a), np.unique(x))
    same(kiln.sort(a, descending=True), np.sort(x)[::-1])
    same(kiln.cumulative_sum(a, include_initial=True), np.concatenate([[0], np.cumsum(x)]).astype(np.int64))


def test_linalg_and_creation():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((3, 5, 4))
    y = rng.standard_normal((3, 4, 2))
    a, b = kiln.asarray(x), kiln.asarray(y)
    same(kiln.linalg.vector_norm(a, axis=-1), np.linalg.norm(x, axis=-1), False)
    same(kiln.linalg.vector_norm(a, ord=1), np.sum(np.abs(x)), False)
    same(kiln.linalg.matrix_norm(a, ord=np.inf), np.linalg.norm(x, np.inf, axis=(-2, -1)), False)
    same(kiln.linalg.matrix_norm(a), np.linalg.norm(x, axis=(-2, -1)), False)
    same(kiln.linalg.diagonal(a, offset=1), np.diagonal(x, 1, -2, -1))
    same(kiln.linalg.trace(a), np.trace(x, axis1=-2, axis2=-1), False)
    same(kiln.vecdot(a, a), np.sum(x * x, axis=-1), False)
    same(kiln.tensordot(a, b, axes=([2, 0], [1, 0])), np.tensordot(x, y, axes=([2, 0], [1, 0])), False)
    same(kiln.linalg.cross(a[..., :3], a[..., 1:]), np.cross(x[..., :3], x[..., 1:]), False)
    same(kiln.linalg.outer(a[0, 0], b[0, 0]), np.outer(x[0, 0], y[0, 0]), False)
    m = kiln.asarray(np.arange(9).reshape(3, 3))
    same(kiln.linalg.matrix_power(m, 3), np.linalg.matrix_power(np.arange(9).reshape(3, 3), 3))
    same(kiln.matmul(m, m), np.arange(9).reshape(3, 3) @ np.arange(9).reshape(3, 3))
    with pytest.raises(NotImplementedError):
        kiln.linalg.matrix_norm(a, ord=2)
    for xs, ys in kiln.meshgrid(kiln.arange(3), kiln.arange(2)), :
        same(xs, np.meshgrid(np.arange(3), np.arange(2))[0])
        same(ys, np.meshgrid(np.arange(3), np.arange(2))[1])
    same(kiln.zeros((2, 0), dtype=kiln.int8), np.zeros((2, 0), np.int8))
    same(kiln.full((3,), True), np.full(3, True))
    same(kiln.linspace(0, 1, 5, endpoint=False), np.linspace(0, 1, 5, endpoint=False))
    same(kiln.eye(3, 4, k=1, dtype=kiln.float32), np.eye(3, 4, 1, dtype=np.float32))
    same(kiln.arange(1, 10, 3), np.arange(1, 10, 3))
    z = kiln.asarray(np.array([1 + 2j, -3j], np.complex64))
    same(kiln.real(z), np.array([1, 0], np.float32))
    same(kiln.imag(z), np.array([2, -3], np.float32))
    same(kiln.conj(z), np.array([1 - 2j, 3j], np.complex64))
    with pytest.raises(ValueError):
        kiln.asarray(np.ones(3), copy=False)


def test_mask_assignment_bool_and_scalar():
    x = np.arange(12.0).reshape(3, 4)
    a = kiln.asarray(x)
    m = x % 3 == 0
    a[kiln.asarray(m)] = -1.0
    x[m] = -1.0
    same(a, x)
    b = kiln.asarray(np.zeros((2, 3), bool))
    mb = np.array([[True, False, True], [False, False, True]])
    b[kiln.asarray(mb)] = True
    same(b, mb)
    with pytest.raises(IndexError):
        a[kiln.asarray(np.ones(5, bool))] = 0.0


@pytest.mark.parametrize("shape", [(3, 3, 5, 4), (5, 3, 7, 2)])
def test_integer_array_indexing(shape):
    """Integer arrays on any rank, mixed with ints, slices and '...'
    (NumPy's placement of the broadcast block), read and assigned."""
    x = np.arange(int(np.prod(shape))).reshape(shape).astype(np.float32)
    a = kiln.asarray(x)
    i = np.array([[0, 2], [1, -1]])
    j = np.array([1, 0])
    keys = [(i,), (slice(None), i[:, :1]), (0, i[:1], j), (slice(None), j, j), (j, slice(1, 3), j),
            (Ellipsis, j), (j, slice(None, None, 2), i % shape[2], 1), ([1, 0],), (slice(None), [], 0),
            (kiln.asarray(j),)]
    for k in keys:
        hk = tuple(v.get() if isinstance(v, kiln.Array) else v for v in k)
        same(a[k], x[hk])
    for k in keys[:7]:
        y = x.copy()
        c = kiln.asarray(y)
        v = np.arange(np.asarray(y[k]).size, dtype=np.float32).reshape(np.shape(y[k])) + 1000
        y[k] = v
        c[k] = kiln.asarray(v)
        same(c, y)
        y[k] = -5
        c[k] = -5
        same(c, y)
        # values that broadcast to the selection (the C put broadcasts):
        # its last axis only, and the same with a leading 1
        sel = np.shape(y[k])
        if sel:
            row = np.arange(sel[-1], dtype=np.float32) - 7
            for v in (row, row[None, None]):
                y[k] = v
                c[k] = kiln.asarray(v)
                same(c, y)
            if sel[-1] > 1:
                with pytest.raises(ValueError):
                    c[k] = kiln.asarray(np.zeros(sel[-1] + 1, np.float32))
    with pytest.raises(IndexError):
        a[np.array([shape[0]])]
    with pytest.raises(IndexError):
        a[np.array([0, 1, 2]), np.array([0, 1])]
    with pytest.raises(IndexError):
        a[np.array([0.5])]
    # NumPy checks the indices where a slice empties the result, not where
    # the indices broadcast to nothing
    with pytest.raises(IndexError):
        a[0:0, np.array([shape[1]])]
    same(a[np.array([], np.int64), np.array([shape[1] + 4])], x[np.array([], np.int64), np.array([shape[1] + 4])])
    same(a[::2, np.array([1, -1]), 1:], x[::2, np.array([1, -1]), 1:])
    t = kiln.permute_dims(kiln.asarray(np.ascontiguousarray(x.transpose(2, 0, 1, 3))), (1, 2, 0, 3))
    same(t[1:, j, ::-1], x[1:, j, ::-1])


def test_complex_logs_special_values():
    """log/log1p/log2/log10 of complex arrays (parts through hypot and
    atan2): NumPy's values, infinities, NaNs and signed zeros included."""
    vals = [0.0, -0.0, 1.0, -2.5, 1e-300, np.inf, -np.inf, np.nan]
    z = np.array([complex(a, b) for a in vals for b in vals], np.complex128)
    z.real = np.repeat(vals, len(vals))  # keep -0.0 real parts
    a = kiln.asarray(z)
    with np.errstate(all="ignore"):
        for name in ("log", "log1p", "log2", "log10"):
            got, e = getattr(kiln, name)(a).get(), getattr(np, name)(z)
            assert got.dtype == e.dtype
            fin = np.isfinite(e)
            assert np.allclose(got[fin], e[fin])
            assert np.array_equal(np.isnan(got.real), np.isnan(e.real)), name
            assert np.array_equal(np.isinf(got.real), np.isinf(e.real)), name
            for part in (np.real, np.imag):
                g, w = part(got), part(e)
                assert np.array_equal(np.isnan(g), np.isnan(w)), name
                ok = np.isfinite(w)
                assert np.array_equal(g[~ok & ~np.isnan(w)], w[~ok & ~np.isnan(w)]), name
                assert np.allclose(g[ok], w[ok], rtol=1e-12, atol=0), name
                assert np.array_equal(np.signbit(g[ok & (w == 0)]), np.signbit(w[ok & (w == 0)])), name
        assert getattr(kiln, "log")(kiln.asarray(z.astype(np.complex64))).dtype == np.complex64


def test_complex_hyperbolic():
    """sinh/cosh/tanh of complex arrays (the C library's complex ops) against
    NumPy, finite values and the standard's special values."""
    rng = np.random.default_rng(3)
    z = (rng.standard_normal(33) * 3 + 1j * rng.standard_normal(33) * 3).astype(np.complex128)
    specials = np.array([0j, complex(0, np.inf), complex(np.inf, 0), complex(np.inf, 1.5),
                         complex(np.nan, 0), complex(30.0, 1.0), complex(-np.inf, -2.0)])
    a = kiln.asarray(z)
    with np.errstate(all="ignore"):
        for name in ("sinh", "cosh", "tanh"):
            got = getattr(kiln, name)(a).get()
            assert got.dtype == np.complex128
            assert np.allclose(got, getattr(np, name)(z), rtol=1e-12, atol=1e-12), name
            s = getattr(kiln, name)(kiln.asarray(specials)).get()
            e = getattr(np, name)(specials)
            fin = np.isfinite(e)
            assert np.allclose(s[fin], e[fin]), (name, s, e)
            assert np.array_equal(np.isinf(s.real), np.isinf(e.real)), (name, s, e)
