"""kiln.linalg: what kiln's C library has (matmul, dot, norms), with NumPy's
signatures. Solvers and factorisations are not in kiln (docs/python.md)."""
import numpy as np

from . import _kiln as _k
from ._array import _flat, asarray, dot, matmul  # noqa: F401

_ORD = {None: _k.KILN_REDUCE_NORM2, 2: _k.KILN_REDUCE_NORM2, "fro": _k.KILN_REDUCE_NORM2,
        1: _k.KILN_REDUCE_NORM1, np.inf: _k.KILN_REDUCE_NORM_INF}


def norm(x, ord=None, axis=None, keepdims=False):
    """Vector norms (ord None/2, 1, inf) of 1-D arrays, and the Frobenius
    norm (ord None or 'fro') of n-D arrays, over all elements (axis None)."""
    x = asarray(x)
    if axis is not None:
        raise NotImplementedError("norm along an axis is not bound yet")
    if x.ndim > 1 and ord not in (None, "fro"):
        raise NotImplementedError("matrix norms other than Frobenius are not bound yet")
    if ord not in _ORD:
        raise NotImplementedError(f"norm ord={ord!r} is not bound")
    r = _k.reduce(_ORD[ord], x)
    if keepdims:
        r = _k.strided(r, r._offset, (1,) * x.ndim, (0,) * x.ndim, False)
    return r


def vdot(a, b):
    return dot(_flat(asarray(a)), _flat(asarray(b)))


# ------------------------------------------------ the array API's linalg names
# On the device through kiln's element-wise ops, reductions and views.
# Not here (kiln's C library has no solvers or factorisations): cholesky,
# det, eigh, eigvalsh, inv, matrix_rank, pinv, qr, slogdet, solve, svd,
# svdvals; matrix_norm ord 2, -2 and 'nuc' (they need the SVD).

def _api():
    from . import _array_api
    return _array_api


def _ufunc(name):
    from ._array import UFUNCS
    return UFUNCS[name]


def _real_dtype(dt):
    dt = np.dtype(dt)
    return np.dtype(np.float32 if dt == np.complex64 else np.float64 if dt.kind == "c" else dt)


def vector_norm(x, axis=None, keepdims=False, ord=2):  # noqa: A002
    """||x||_ord over axis (all elements when None), the array API's vector_norm."""
    from ._array import sum as _sum, max as _max, min as _min
    x = asarray(x)
    rd = _real_dtype(x.dtype)
    ax = axis
    if isinstance(ax, tuple) and x.ndim and len(ax) == 0:
        return _ufunc("absolute")(x).astype(rd)
    absx = _ufunc("absolute")(x)
    if absx.dtype != rd:
        absx = absx.astype(rd)
    if ord == np.inf:
        r = _max(absx, ax, keepdims) if absx.size else _api().zeros(_red_shape(x, ax, keepdims), dtype=rd)
    elif ord == -np.inf:
        r = _min(absx, ax, keepdims)
    elif ord == 0:
        r = _sum(absx != 0, ax, None, keepdims).astype(rd)
    elif ord == 1:
        r = _sum(absx, ax, None, keepdims)
    elif ord == 2:
        r = _ufunc("sqrt")(_sum(absx * absx, ax, None, keepdims))
    else:
        p = float(ord)
        r = _ufunc("power")(_sum(_ufunc("power")(absx, p), ax, None, keepdims), 1.0 / p)
    return r.astype(rd) if r.dtype != rd else r


def _red_shape(x, axis, keepdims):
    axes = range(x.ndim) if axis is None else [a % x.ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)]
    if keepdims:
        return tuple(1 if i in axes else n for i, n in enumerate(x.shape))
    return tuple(n for i, n in enumerate(x.shape) if i not in axes)


def matrix_norm(x, keepdims=False, ord="fro"):  # noqa: A002
    """Matrix norms of the last two axes: 'fro', 1, -1, inf, -inf (2, -2 and
    'nuc' need the SVD, which kiln lacks: NotImplementedError)."""
    from ._array import sum as _sum, max as _max, min as _min
    x = asarray(x)
    if ord == "fro":
        return vector_norm(x, axis=(-2, -1), keepdims=keepdims, ord=2)
    if ord in (1, -1, np.inf, -np.inf):
        absx = _ufunc("absolute")(x).astype(_real_dtype(x.dtype))
        s = _sum(absx, -2 if ord in (1, -1) else -1, None, True)
        red = _max if ord in (1, np.inf) else _min
        r = red(s, (-2, -1), True)
        return r if keepdims else _api().reshape(r, x.shape[:-2])
    raise NotImplementedError(f"matrix_norm ord={ord!r} needs the SVD, which kiln's C library lacks")


def diagonal(x, offset=0):
    """A view of the diagonal of the last two axes (offset above/below the main one)."""
    from ._array import _strided
    x = asarray(x)
    m, n = x.shape[-2], x.shape[-1]
    s0, s1 = x._estrides[-2], x._estrides[-1]
    if offset >= 0:
        k = max(0, min(m, n - offset))
        off = x._offset + offset * s1 if k else x._offset
    else:
        k = max(0, min(m + offset, n))
        off = x._offset - offset * s0 if k else x._offset
    return _strided(x, off, x.shape[:-2] + (k,), x._estrides[:-2] + (s0 + s1,))


def trace(x, offset=0, dtype=None):
    from ._array import sum as _sum
    d = diagonal(x, offset)
    return _sum(d, -1, _api()._sum_dtype(d, dtype))


def outer(x1, x2):
    api = _api()
    return _ufunc("multiply")(api.reshape(x1, (-1, 1)), api.reshape(x2, (1, -1)))


def cross(x1, x2, axis=-1):
    """The cross product of 3-vectors along axis (broadcasting the others)."""
    api = _api()
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != 3 or x2.shape[axis] != 3:
        raise ValueError(f"cross: axis {axis} must have length 3 (got {x1.shape} and {x2.shape})")
    shape = np.broadcast_shapes(x1.shape, x2.shape)
    x1, x2 = api.broadcast_to(x1, shape), api.broadcast_to(x2, shape)
    ax = axis % len(shape)

    def c(x, i):
        idx = [slice(None)] * len(shape)
        idx[ax] = slice(i, i + 1)
        return x[tuple(idx)]

    mul, sub = _ufunc("multiply"), _ufunc("subtract")
    a0, a1, a2 = c(x1, 0), c(x1, 1), c(x1, 2)
    b0, b1, b2 = c(x2, 0), c(x2, 1), c(x2, 2)
    return api.concat([sub(mul(a1, b2), mul(a2, b1)), sub(mul(a2, b0), mul(a0, b2)),
                       sub(mul(a0, b1), mul(a1, b0))], axis=ax)


def matrix_power(x, n):
    """x @ x @ ... (n times; n >= 0: repeated squaring; n < 0 needs inv, which kiln lacks)."""
    import operator
    n = operator.index(n)
    x = asarray(x)
    if n < 0:
        raise NotImplementedError("matrix_power with n < 0 needs inv, which kiln's C library lacks")
    m = x.shape[-1]
    eye = _api().eye(m, dtype=x.dtype)
    r = _api().broadcast_to(eye, x.shape).copy()
    base = x
    while n:
        if n & 1:
            r = _api().matmul(r, base)
        n >>= 1
        if n:
            base = _api().matmul(base, base)
    return r


def matrix_transpose(x):
    return _api().matrix_transpose(x)


def tensordot(x1, x2, axes=2):
    return _api().tensordot(x1, x2, axes=axes)


def vecdot(x1, x2, axis=-1):
    return _api().vecdot(x1, x2, axis=axis)


def matmul(x1, x2):  # noqa: F811 (integer operands too, through the array API's matmul)
    return _api().matmul(x1, x2)
