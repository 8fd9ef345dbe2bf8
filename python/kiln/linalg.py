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
