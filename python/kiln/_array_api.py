"""The array API standard's namespace (2023.12) over kiln's arrays.

kiln's module is the namespace (``x.__array_namespace__()`` is ``kiln``):
the functions here have the standard's signatures (positional-only and
keyword-only parameters as the spec writes them, ``device=`` on creation
functions) and are exported by kiln/__init__.py over the NumPy-style
names where those differ. kiln's own extra parameters (``queue=``,
``mode=``) are kept as keywords. Functions that run on the host (a copy
to NumPy and back) are marked HOST in their docstrings and listed in
docs/python.md; everything else runs on the device.
"""
import builtins
import operator

import numpy as np

from . import _array as _a
from . import _kiln as _k
from ._array import Array, UFUNCS, asarray as _asarray_np
from ._core import Device, Queue, get_default_queue
from ._dtypes import BOOL, FROM_CODE

_DTYPES = [np.dtype(t) for t in (np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8,
                                 np.uint16, np.uint32, np.uint64, np.float32, np.float64,
                                 np.complex64, np.complex128)]


def _queue_of(device, queue=None):
    """The queue for device= (None, a kiln Device, a Queue, or a selector string)."""
    if queue is not None:
        return queue
    if device is None:
        return get_default_queue()
    if isinstance(device, Queue):
        return device
    q = get_default_queue()
    if isinstance(device, Device):
        if device == q.device or getattr(device, "name", None) == getattr(q.device, "name", None):
            return q
        raise ValueError(f"device={device!r}: kiln arrays are made on the current queue's device "
                         f"({q.device!r}); use `with kiln.Queue(kiln.Context(device)):`")
    if device == "cpu" and _a._dlpack_device is not None:
        return q
    raise ValueError(f"device={device!r} is not a kiln Device or Queue")


def _dt(dtype):
    return None if dtype is None else np.dtype(dtype)


# ------------------------------------------------------------- creation


def asarray(obj, dtype=None, device=None, copy=None, queue=None):
    q = _queue_of(device, queue)
    if isinstance(obj, Array):
        if dtype is not None and np.dtype(dtype) != obj.dtype:
            if copy is False:
                raise ValueError("asarray: copy=False but a dtype change needs a copy")
            return obj.astype(dtype)
        return obj.copy() if copy else obj
    if copy is False:
        raise ValueError("asarray: copy=False cannot be honoured for host data (kiln copies it "
                         "to the device)")
    if isinstance(obj, (list, tuple)) and _has_arrays(obj):
        obj = _nested_host(obj)
    if dtype is None and isinstance(obj, (builtins.bool, int, float, complex)):
        dtype = (np.bool_ if isinstance(obj, builtins.bool) else np.int64 if isinstance(obj, int)
                 else np.float64 if isinstance(obj, float) else np.complex128)
    return _asarray_np(obj, dtype=dtype, queue=q)


def _has_arrays(obj):
    return builtins.any(isinstance(o, Array) or (isinstance(o, (list, tuple)) and _has_arrays(o))
                        for o in obj)


def _nested_host(obj):
    if isinstance(obj, Array):
        return obj.get()
    if isinstance(obj, (list, tuple)):
        return [_nested_host(o) for o in obj]
    return obj


def _shape(shape):
    return (operator.index(shape),) if isinstance(shape, (int, np.integer)) else tuple(shape)


def empty(shape, dtype=None, device=None, queue=None):
    return _a.empty(_shape(shape), np.float64 if dtype is None else dtype, _queue_of(device, queue))


def zeros(shape, dtype=None, device=None, queue=None):
    return _a.zeros(_shape(shape), np.float64 if dtype is None else dtype, _queue_of(device, queue))


def ones(shape, dtype=None, device=None, queue=None):
    return _a.ones(_shape(shape), np.float64 if dtype is None else dtype, _queue_of(device, queue))


def full(shape, fill_value, dtype=None, device=None, queue=None):
    if dtype is None:
        if isinstance(fill_value, Array):
            dtype = fill_value.dtype
            fill_value = fill_value.item()
        else:
            dtype = (np.bool_ if isinstance(fill_value, builtins.bool) else np.int64
                     if isinstance(fill_value, int) else np.float64
                     if isinstance(fill_value, float) else np.complex128
                     if isinstance(fill_value, complex) else np.asarray(fill_value).dtype)
    elif isinstance(fill_value, Array):
        fill_value = fill_value.item()
    return _a.full(_shape(shape), fill_value, dtype, _queue_of(device, queue))


def _like_q(x, device):
    return x.queue if device is None else _queue_of(device)


def empty_like(x, dtype=None, device=None):
    return _a.empty(x.shape, x.dtype if dtype is None else dtype, _like_q(x, device))


def zeros_like(x, dtype=None, device=None):
    return _a.zeros(x.shape, x.dtype if dtype is None else dtype, _like_q(x, device))


def ones_like(x, dtype=None, device=None):
    return _a.ones(x.shape, x.dtype if dtype is None else dtype, _like_q(x, device))


def full_like(x, fill_value, dtype=None, device=None):
    return _a.full(x.shape, fill_value, x.dtype if dtype is None else dtype, _like_q(x, device))


def arange(start, stop=None, step=1, dtype=None, device=None, queue=None):
    """HOST for float dtypes with inexact steps (NumPy's arange, copied over)."""
    q = _queue_of(device, queue)
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = (np.float64 if builtins.any(isinstance(v, float) for v in (start, stop, step))
                 else np.int64)
    return _asarray_np(np.arange(start, stop, step, dtype=dtype), queue=q)


def linspace(start, stop, num=50, endpoint=True, dtype=None, device=None, queue=None):
    """HOST (NumPy's linspace, copied over)."""
    if dtype is None:
        dtype = (np.complex128 if builtins.any(isinstance(v, complex) for v in (start, stop))
                 else np.float64)
    return _asarray_np(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype),
                       queue=_queue_of(device, queue))


def eye(n_rows, n_cols=None, k=0, dtype=None, device=None, queue=None):
    """HOST (NumPy's eye, copied over)."""
    return _asarray_np(np.eye(n_rows, n_cols, k, dtype=np.float64 if dtype is None else dtype),
                       queue=_queue_of(device, queue))


def meshgrid(*arrays, indexing="xy"):
    if indexing not in ("xy", "ij"):
        raise ValueError(f"meshgrid: indexing must be 'xy' or 'ij', not {indexing!r}")
    arrays = [asarray(a) for a in arrays]
    n = len(arrays)
    shape = [a.size for a in arrays]
    if indexing == "xy" and n >= 2:
        shape[0], shape[1] = shape[1], shape[0]
    out = []
    for i, a in enumerate(arrays):
        s = [1] * n
        ax = i
        if indexing == "xy" and n >= 2 and i < 2:
            ax = 1 - i
        s[ax] = a.size
        out.append(_a.broadcast_to(_a.reshape(a, tuple(s)), tuple(shape)).copy())
    return out


def _tri(x, k, lower):
    x = asarray(x)
    n, m = x.shape[-2], x.shape[-1]
    i = _a.reshape(arange(n, dtype=np.int64, queue=x.queue), (n, 1))
    j = _a.reshape(arange(m, dtype=np.int64, queue=x.queue), (1, m))
    keep = (j - i <= k) if lower else (j - i >= k)
    return _a.where(keep, x, zeros((), dtype=x.dtype, queue=x.queue))


def tril(x, k=0):
    return _tri(x, k, True)


def triu(x, k=0):
    return _tri(x, k, False)


def from_dlpack(x, device=None, copy=None):
    return _a.from_dlpack(x, copy=copy)


# ---------------------------------------------------------- data types


def astype(x, dtype, copy=True, device=None):
    if not copy and np.dtype(dtype) == x.dtype:
        return x
    if np.dtype(dtype) == x.dtype:
        return x.copy()
    return _a.astype(x, dtype)


def _as_dtype(x):
    if isinstance(x, Array):
        return x.dtype
    return np.dtype(x)


def can_cast(from_, to):
    return builtins.bool(np.can_cast(_as_dtype(from_), np.dtype(to)))


def result_type(*arrays_and_dtypes):
    dts = []
    scalars = []
    for x in arrays_and_dtypes:
        if isinstance(x, (builtins.bool, int, float, complex)):
            scalars.append(x)
        else:
            dts.append(_as_dtype(x))
    if not dts:
        raise ValueError("result_type: at least one array or dtype is required")
    r = dts[0]
    for d in dts[1:]:
        r = _promote(r, d)
    for s in scalars:
        r = _a._weak_dtype(s, r)
    return r


def _promote(a, b):
    if (a.kind in "iu") and (b.kind in "iu") and a.kind != b.kind:
        u, i = (a, b) if a.kind == "u" else (b, a)
        if u.itemsize >= 8:
            raise TypeError(f"kiln: no dtype in the standard holds both {a} and {b}")
    return np.promote_types(a, b)


class finfo_object:
    def __init__(self, f):
        self.bits, self.eps, self.max, self.min = f.bits, float(f.eps), float(f.max), float(f.min)
        self.smallest_normal = float(f.smallest_normal)
        self.dtype = f.dtype


def finfo(type):  # noqa: A002
    dt = type.dtype if isinstance(type, Array) else np.dtype(type)
    return finfo_object(np.finfo(dt))


def iinfo(type):  # noqa: A002
    dt = type.dtype if isinstance(type, Array) else np.dtype(type)
    return np.iinfo(dt)


def isdtype(dtype, kind):
    return np.isdtype(np.dtype(dtype), kind)


class _Info:
    """__array_namespace_info__(): what the namespace offers."""

    def capabilities(self):
        return {"boolean indexing": True, "data-dependent shapes": True, "max dimensions": 8}

    def default_device(self):
        return get_default_queue().device

    def default_dtypes(self, *, device=None):
        return {"real floating": np.dtype(np.float64), "complex floating": np.dtype(np.complex128),
                "integral": np.dtype(np.int64), "indexing": np.dtype(np.int64)}

    def dtypes(self, *, device=None, kind=None):
        dts = {str(d) if d != BOOL else "bool": d for d in _DTYPES}
        if kind is None:
            return dts
        return {k: d for k, d in dts.items() if np.isdtype(d, kind)}

    def devices(self):
        return [get_default_queue().device]


def __array_namespace_info__():
    return _Info()


# -------------------------------------------------------- element-wise


def _b(name):
    f = UFUNCS[name]

    def g(x1, x2, /):
        return f(x1, x2)

    g.__name__ = g.__qualname__ = name
    g.__doc__ = f.__doc__
    return g


def _u(name):
    f = UFUNCS[name]

    def g(x, /):
        return f(x)

    g.__name__ = g.__qualname__ = name
    g.__doc__ = f.__doc__
    return g


_BINARY = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "true_divide",
    "floor_divide": "floor_divide", "remainder": "remainder", "pow": "power", "maximum": "maximum",
    "minimum": "minimum", "equal": "equal", "not_equal": "not_equal", "less": "less",
    "less_equal": "less_equal", "greater": "greater", "greater_equal": "greater_equal",
    "bitwise_and": "bitwise_and", "bitwise_or": "bitwise_or", "bitwise_xor": "bitwise_xor",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "logical_and": "logical_and", "logical_or": "logical_or", "logical_xor": "logical_xor",
    "atan2": "arctan2", "hypot": "hypot", "copysign": "copysign", "logaddexp": "logaddexp",
}
_UNARY = {
    "abs": "absolute", "negative": "negative", "positive": "positive", "sqrt": "sqrt", "exp": "exp",
    "log": "log", "sin": "sin", "cos": "cos", "tan": "tan", "asin": "arcsin", "acos": "arccos",
    "atan": "arctan", "sinh": "sinh", "cosh": "cosh", "tanh": "tanh", "asinh": "arcsinh",
    "acosh": "arccosh", "atanh": "arctanh", "log1p": "log1p", "expm1": "expm1", "log2": "log2",
    "log10": "log10", "floor": "floor", "ceil": "ceil", "trunc": "trunc", "round": "rint",
    "sign": "sign", "square": "square", "bitwise_invert": "invert", "logical_not": "logical_not",
    "isnan": "isnan", "isinf": "isinf", "isfinite": "isfinite", "signbit": "signbit",
}

ELEMENTWISE = {}
for _n, _t in _BINARY.items():
    ELEMENTWISE[_n] = _b(_t)
for _n, _t in _UNARY.items():
    ELEMENTWISE[_n] = _u(_t)


def _int_rounding(name):
    g = ELEMENTWISE[name]

    def h(x, /):
        if isinstance(x, Array) and x.dtype.kind in "iub":
            return x.copy()
        return g(x)

    h.__name__ = h.__qualname__ = name
    return h


for _n in ("floor", "ceil", "trunc", "round"):
    ELEMENTWISE[_n] = _int_rounding(_n)


def conj(x):
    return _k.part(x, 2)


def real(x):
    return _k.part(x, 0).copy() if x.dtype.kind == "c" else x.copy()


def imag(x):
    if x.dtype.kind != "c":
        return zeros_like(x)
    return _k.part(x, 1).copy()


def clip(x, min=None, max=None):  # noqa: A002
    x = asarray(x)
    r = x
    if min is not None:
        r = UFUNCS["maximum"](r, min)
    if max is not None:
        r = UFUNCS["minimum"](r, max)
    if r.dtype != x.dtype:
        r = r.astype(x.dtype)
    return r.copy() if r is x else r


# --------------------------------------------------------- manipulation


def broadcast_arrays(*arrays):
    shape = np.broadcast_shapes(*[a.shape for a in arrays])
    return [_a.broadcast_to(a, shape) for a in arrays]


def broadcast_to(x, shape):
    return _a.broadcast_to(x, tuple(shape))


def concat(arrays, axis=0):
    arrays = list(arrays)
    if axis is None:
        arrays = [_a.reshape(a, (-1,)) for a in arrays]
        axis = 0
    return _a.concatenate(arrays, axis)


def stack(arrays, axis=0):
    return _a.stack(list(arrays), axis)


def expand_dims(x, axis=0):
    return _a.expand_dims(x, axis)


def squeeze(x, axis=None):
    return _a.squeeze(x, axis)


def flip(x, axis=None):
    return _a.flip(x, axis)


def permute_dims(x, axes):
    return _a.transpose(x, tuple(axes))


def moveaxis(x, source, destination):
    src = [s % x.ndim for s in ((source,) if isinstance(source, int) else source)]
    dst = [d % x.ndim for d in ((destination,) if isinstance(destination, int) else destination)]
    order = [n for n in range(x.ndim) if n not in src]
    for d, s in sorted(zip(dst, src)):
        order.insert(d, s)
    return _a.transpose(x, tuple(order))


def reshape(x, shape, copy=None):
    r = _a.reshape(x, tuple(shape))
    if copy:
        return r.copy()
    return r


def roll(x, shift, axis=None):
    if axis is None:
        flat = _a.reshape(x, (-1,)) if x.ndim != 1 else x
        n = flat.size
        if n == 0:
            return x.copy()
        s = builtins.sum(shift) if isinstance(shift, (tuple, list)) else shift
        s %= n
        r = _a.concatenate([flat[n - s:], flat[:n - s]], 0) if s else flat.copy()
        return _a.reshape(r, x.shape)
    shifts = shift if isinstance(shift, (tuple, list)) else (shift,) * (1 if isinstance(axis, int) else len(axis))
    axes = (axis,) if isinstance(axis, int) else tuple(axis)
    r = x
    for s, ax in zip(shifts, axes):
        n = r.shape[ax]
        if n == 0:
            continue
        s %= n
        if s:
            idx = [slice(None)] * r.ndim
            a_idx, b_idx = list(idx), list(idx)
            a_idx[ax], b_idx[ax] = slice(n - s, None), slice(None, n - s)
            r = _a.concatenate([r[tuple(a_idx)], r[tuple(b_idx)]], ax)
    return r.copy() if r is x else r


def repeat(x, repeats, axis=None):
    if axis is None:
        x = _a.reshape(x, (-1,)) if x.ndim != 1 else x
        axis = 0
    axis %= builtins.max(x.ndim, 1)
    n = x.shape[axis]
    if isinstance(repeats, Array):
        reps = repeats.get().astype(np.int64)
    else:
        reps = np.asarray(repeats, dtype=np.int64)
    if reps.ndim == 0:
        reps = np.full(n, int(reps), np.int64)
    idx = np.repeat(np.arange(n, dtype=np.int64), reps)
    return take(x, _asarray_np(idx, queue=x.queue), axis=axis)


def tile(x, repetitions):
    reps = tuple(repetitions)
    nd = builtins.max(x.ndim, len(reps))
    reps = (1,) * (nd - len(reps)) + reps
    r = _a.reshape(x, (1,) * (nd - x.ndim) + x.shape)
    for ax, k in enumerate(reps):
        if k != 1:
            r = _a.concatenate([r] * k, ax) if k > 0 else _a.empty(
                r.shape[:ax] + (0,) + r.shape[ax + 1:], r.dtype, r.queue)
    return r.copy() if r is x else r


def unstack(x, axis=0):
    axis %= x.ndim
    idx = [slice(None)] * x.ndim
    out = []
    for i in range(x.shape[axis]):
        idx[axis] = i
        out.append(x[tuple(idx)])
    return tuple(out)


# ------------------------------------------------------------ indexing


def take(x, indices, axis=None, mode="raise"):
    # NumPy's np.take (the standard's 1-D indices are one case of it)
    return _a.take(x, indices, axis, mode)


# ---------------------------------------------------- searching, sorting


def argmax(x, axis=None, keepdims=False):
    return _a.argmax(x, axis, keepdims)


def argmin(x, axis=None, keepdims=False):
    return _a.argmin(x, axis, keepdims)


def nonzero(x):
    if x.ndim == 0:
        raise ValueError("nonzero: 0-d arrays are not accepted (the standard's rule)")
    return _a.nonzero(x)


def searchsorted(x1, x2, side="left", sorter=None):
    if sorter is not None:
        x1 = take(x1, sorter)
    return _a.searchsorted(x1, x2, side)


def where(condition, x1, x2):
    return _a.where(condition, x1, x2)


def sort(x, axis=-1, descending=False, stable=True):
    return _a.sort(x, axis, descending)


def argsort(x, axis=-1, descending=False, stable=True):
    return _a.argsort(x, axis, descending)


# ---------------------------------------------------------- statistics


def max(x, axis=None, keepdims=False):  # noqa: A001
    return _a.max(x, axis, keepdims)


def min(x, axis=None, keepdims=False):  # noqa: A001
    return _a.min(x, axis, keepdims)


def mean(x, axis=None, keepdims=False):
    return _a.mean(x, axis, keepdims)


def _sum_dtype(x, dtype):
    if dtype is not None:
        return dtype
    k = x.dtype.kind
    if k == "b" or k == "i":
        return np.int64
    if k == "u":
        return np.uint64
    return None


def sum(x, axis=None, dtype=None, keepdims=False):  # noqa: A001
    return _a.sum(x, axis, _sum_dtype(x, dtype), keepdims)


def prod(x, axis=None, dtype=None, keepdims=False):
    return _a.prod(x, axis, _sum_dtype(x, dtype), keepdims)


def _nan_through(r, x, axis, keepdims):
    """NaN where the reduced slice holds a NaN (or an infinity), as NumPy's var."""
    if x.dtype.kind != "f" or x.size == 0:
        return r
    m = _a.mean(x, axis, keepdims)
    r = UFUNCS["add"](r, UFUNCS["multiply"](m, 0.0))
    return r.astype(x.dtype) if r.dtype != x.dtype else r


def _var_composite(x, axis, correction, keepdims):
    """var over any axes (a tuple, () too): sum((x - mean)^2) / (N - correction)."""
    axes = tuple(a % x.ndim for a in axis)
    n = int(np.prod([x.shape[a] for a in axes])) if axes else 1
    if not axes:
        d = UFUNCS["subtract"](x, x)
        r = UFUNCS["multiply"](d, d)
    else:
        m = _a.mean(x, axes, True)
        d = UFUNCS["subtract"](x, m)
        r = _a.sum(UFUNCS["multiply"](d, d), axes, None, keepdims)
    return UFUNCS["true_divide"](r, float(builtins.max(n - correction, 0)))


def _var(x, axis, correction, keepdims, std):
    if isinstance(axis, (tuple, list)) and x.ndim and (len(axis) != 1 and len(axis) != x.ndim):
        r = _var_composite(x, axis, correction, keepdims)
        if std:
            r = UFUNCS["sqrt"](r)
        return r.astype(x.dtype) if x.dtype.kind == "f" and r.dtype != x.dtype else r
    r = (_a.std if std else _a.var)(x, axis, correction, keepdims)
    return _nan_through(r, x, axis, keepdims)


def std(x, axis=None, correction=0.0, keepdims=False, ddof=None):
    return _var(x, axis, correction if ddof is None else ddof, keepdims, True)


def var(x, axis=None, correction=0.0, keepdims=False, ddof=None):
    return _var(x, axis, correction if ddof is None else ddof, keepdims, False)


def cumulative_sum(x, axis=None, dtype=None, include_initial=False):
    if axis is None:
        if x.ndim > 1:
            raise ValueError("cumulative_sum: axis is required for arrays of more than one dimension")
        axis = 0
    r = _a.cumsum(x, axis, _sum_dtype(x, dtype))
    if include_initial:
        ax = axis % x.ndim
        z = _a.zeros(x.shape[:ax] + (1,) + x.shape[ax + 1:], r.dtype, x.queue)
        r = _a.concatenate([z, r], ax)
    return r


def all(x, axis=None, keepdims=False):  # noqa: A001
    return _a.all(x, axis, keepdims)


def any(x, axis=None, keepdims=False):  # noqa: A001
    return _a.any(x, axis, keepdims)


# ---------------------------------------------------------------- sets


def unique_values(x):
    return _a.unique(_a.reshape(x, (-1,)) if x.ndim != 1 else x)


def unique_counts(x):
    v, c = _a.unique(_a.reshape(x, (-1,)) if x.ndim != 1 else x, return_counts=True)
    return _UniqueCounts(v, c)


def unique_inverse(x):
    flat = _a.reshape(x, (-1,)) if x.ndim != 1 else x
    v = _a.unique(flat)
    inv = _a.searchsorted(v, flat, "left")
    return _UniqueInverse(v, _a.reshape(inv, x.shape))


def unique_all(x):
    flat = _a.reshape(x, (-1,)) if x.ndim != 1 else x
    v, c = _a.unique(flat, return_counts=True)
    inv = _a.searchsorted(v, flat, "left")
    order = _a.argsort(flat)
    starts = _a.cumsum(c) - c if c.size else c
    first = _a.take(order, starts.astype(np.int64)) if c.size else _a.empty((0,), np.int64, x.queue)
    return _UniqueAll(v, first, _a.reshape(inv, x.shape), c)


class _UniqueCounts(tuple):
    def __new__(cls, values, counts):
        t = super().__new__(cls, (values, counts))
        t.values, t.counts = values, counts
        return t


class _UniqueInverse(tuple):
    def __new__(cls, values, inverse_indices):
        t = super().__new__(cls, (values, inverse_indices))
        t.values, t.inverse_indices = values, inverse_indices
        return t


class _UniqueAll(tuple):
    def __new__(cls, values, indices, inverse_indices, counts):
        t = super().__new__(cls, (values, indices, inverse_indices, counts))
        t.values, t.indices, t.inverse_indices, t.counts = values, indices, inverse_indices, counts
        return t


# -------------------------------------------------------- linear algebra


def matmul(x1, x2):
    x1, x2 = asarray(x1), asarray(x2)
    if x1.dtype.kind in "fc" and x2.dtype.kind in "fc":
        return _a.matmul(x1, x2)
    return _int_matmul(x1, x2)


def _int_matmul(x1, x2):
    """matmul of integer (and bool) arrays, which kiln's BLAS does not take:
    a broadcast product summed over the inner axis, on the device."""
    if x1.ndim == 0 or x2.ndim == 0:
        raise ValueError("matmul: 0-d operands are not accepted")
    v1, v2 = x1.ndim == 1, x2.ndim == 1
    a = _a.reshape(x1, (1,) + x1.shape) if v1 else x1
    b = _a.reshape(x2, x2.shape + (1,)) if v2 else x2
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {x1.shape} and {x2.shape} do not align")
    dt = _promote(a.dtype, b.dtype)
    p = UFUNCS["multiply"](_a.expand_dims(a, -1), _a.expand_dims(b, -3))
    if p.dtype != dt:
        p = p.astype(dt)
    r = _a.sum(p, -2, dt)
    if v1:
        r = _a.reshape(r, r.shape[:-2] + r.shape[-1:])
    if v2:
        r = _a.reshape(r, r.shape[:-1])
    return r


def matrix_transpose(x):
    return _a.swapaxes(x, -1, -2)


def vecdot(x1, x2, axis=-1):
    x1, x2 = asarray(x1), asarray(x2)
    if x1.shape[axis] != x2.shape[axis]:
        raise ValueError(f"vecdot: axis {axis} has lengths {x1.shape[axis]} and {x2.shape[axis]}")
    if x1.dtype.kind == "c":
        x1 = conj(x1)
    p = UFUNCS["multiply"](x1, x2)
    return _a.sum(p, axis, p.dtype)


def tensordot(x1, x2, axes=2):
    x1, x2 = asarray(x1), asarray(x2)
    dt = _promote(x1.dtype, x2.dtype)
    x1 = x1 if x1.dtype == dt else x1.astype(dt)
    x2 = x2 if x2.dtype == dt else x2.astype(dt)
    if isinstance(axes, int):
        ax1 = list(range(x1.ndim - axes, x1.ndim))
        ax2 = list(range(axes))
    else:
        ax1, ax2 = [list(a) if not isinstance(a, int) else [a] for a in axes]
    ax1 = [a % x1.ndim for a in ax1]
    ax2 = [a % x2.ndim for a in ax2]
    free1 = [a for a in range(x1.ndim) if a not in ax1]
    free2 = [a for a in range(x2.ndim) if a not in ax2]
    k = int(np.prod([x1.shape[a] for a in ax1])) if ax1 else 1
    a = _a.reshape(_a.transpose(x1, tuple(free1 + ax1)).copy(), (-1, k))
    b = _a.reshape(_a.transpose(x2, tuple(ax2 + free2)).copy(), (k, -1))
    r = matmul(a, b)
    return _a.reshape(r, tuple(x1.shape[i] for i in free1) + tuple(x2.shape[i] for i in free2))


NAMES = ["__array_namespace_info__"] + [n for n in list(globals()) if not n.startswith("_") and n not in (
    "sum", "prod", "max", "min", "mean", "argmax", "argmin", "any", "all", "where", "sort", "argsort",
    "builtins", "operator", "np", "Array", "UFUNCS", "Device", "Queue", "get_default_queue", "BOOL",
    "FROM_CODE", "NAMES", "ELEMENTWISE", "finfo_object")]
