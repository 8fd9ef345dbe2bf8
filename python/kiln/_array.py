"""kiln.Array: NumPy's conventions over kiln's C arrays.

The type itself is made by the extension (kiln._kiln.Array: its operators
+ - * / and comparisons are C slots); the methods below are attached to it
at import. Element-wise functions are generated from the extension's op
tables (_kiln.BINARY_OPS / UNARY_OPS): a new C op is one line in
python/src/_kiln.c and appears here by name.
"""
import builtins
import operator

import numpy as np

from . import _kiln as _k
from ._core import get_default_queue
from ._dtypes import BOOL, FROM_CODE, KILN_BOOL_CODE, code_of

Array = _k.Array

_INT_KINDS = "iu"

# ----------------------------------------------------------------- helpers


def _queue(queue):
    return queue if queue is not None else get_default_queue()


def _is_bool(a):
    # flagged uint8 arrays (kiln's comparisons into uint8) and the C
    # library's own KILN_BOOL arrays (any/all, isnan, ... results)
    return a._isbool or a._dtcode == KILN_BOOL_CODE


def _np_dtype(a):
    return BOOL if _is_bool(a) else FROM_CODE[a._dtcode]


def _scalar_bytes(value, dtype):
    return np.asarray(value, dtype=dtype).tobytes()


def _from_numpy(x, queue):
    x = np.asarray(x, order="C")  # (np.ascontiguousarray would make 0-d arrays 1-d)
    isbool = x.dtype == BOOL
    dt = x.dtype
    if dt.byteorder == ">":
        x = x.astype(dt.newbyteorder("="))
    code = code_of(x.dtype)
    a = _k.from_host(queue, code, x.shape, x.view(np.uint8) if isbool else x)
    if isbool:
        a._isbool = True
    return a


def asarray(obj, dtype=None, queue=None):
    """A kiln Array of obj (a kiln Array, a NumPy array, a list, a scalar, or
    anything with __dlpack__ on the device's memory); copies host data to
    the device. dtype as NumPy's."""
    if isinstance(obj, Array):
        if dtype is not None and np.dtype(dtype) != obj.dtype:
            return obj.astype(dtype)
        return obj
    q = _queue(queue)
    x = np.asarray(obj, dtype=dtype)
    if x.dtype == np.float64 and dtype is None and not isinstance(obj, np.ndarray):
        pass  # Python floats are float64, as in NumPy
    if x.dtype.kind not in "biufc":
        raise TypeError(f"kiln arrays hold numbers, not {x.dtype}")
    return _from_numpy(x, q)


array = asarray
to_device = asarray


def empty(shape, dtype=np.float64, queue=None):
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    a = _k.empty(_queue(queue), code_of(dtype), shape)
    if np.dtype(dtype) == BOOL:
        a._isbool = True
    return a


def full(shape, fill_value, dtype=None, queue=None):
    if dtype is None:
        dtype = np.asarray(fill_value).dtype
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
    dt = np.dtype(dtype)
    a = _k.full(_queue(queue), code_of(dt), shape, _scalar_bytes(fill_value, dt))
    if dt == BOOL:
        a._isbool = True
    return a


def zeros(shape, dtype=np.float64, queue=None):
    return full(shape, 0, dtype, queue)


def ones(shape, dtype=np.float64, queue=None):
    return full(shape, 1, dtype, queue)


def empty_like(a, dtype=None):
    return empty(a.shape, a.dtype if dtype is None else dtype, a.queue)


def zeros_like(a, dtype=None):
    return zeros(a.shape, a.dtype if dtype is None else dtype, a.queue)


def ones_like(a, dtype=None):
    return ones(a.shape, a.dtype if dtype is None else dtype, a.queue)


def full_like(a, fill_value, dtype=None):
    return full(a.shape, fill_value, a.dtype if dtype is None else dtype, a.queue)


def arange(start, stop=None, step=1, dtype=None, queue=None):
    if stop is None:
        start, stop = 0, start
    if dtype is None:
        dtype = np.arange(start, start + step, step).dtype if step else np.int64
    n = builtins.max(0, int(np.ceil((stop - start) / step)))
    return _k.arange(_queue(queue), code_of(dtype), n, float(start), float(step))


def _strided(a, offset, shape, strides):
    return _k.strided(a, offset, tuple(shape), tuple(strides), len(shape) == 0)


def broadcast_to(a, shape):
    a = asarray(a)
    shape = tuple(shape)
    if a.shape == shape:
        return a
    nd = len(shape)
    if a.ndim > nd:
        raise ValueError(f"cannot broadcast shape {a.shape} to {shape}")
    ash = (1,) * (nd - a.ndim) + a.shape
    ast = (0,) * (nd - a.ndim) + a._estrides
    strides = []
    for s, want, st in zip(ash, shape, ast):
        if s == want:
            strides.append(st)
        elif s == 1:
            strides.append(0)
        else:
            raise ValueError(f"cannot broadcast shape {a.shape} to {shape}")
    return _strided(a, a._offset, shape, strides)


# ---------------------------------------------------- element-wise functions

_BIN_NAME = {code: name for name, code in _k.BINARY_OPS.items()}
_KIND = {code: _k.BINARY_KINDS[name] for name, code in _k.BINARY_OPS.items()}
_COMPARE, _DIV = 1, 2
_result_cache = {}


def _np_result(ufunc_name, *dtypes):
    key = (ufunc_name,) + dtypes
    r = _result_cache.get(key)
    if r is None:
        r = getattr(np, ufunc_name)(*[np.empty(0, d) for d in dtypes]).dtype
        _result_cache[key] = r
    return r


def _weak_dtype(value, other_dtype):
    """NumPy 2's dtype for a Python scalar beside an array of other_dtype."""
    k = other_dtype.kind
    if isinstance(value, bool):
        return other_dtype if k != "b" else BOOL
    if isinstance(value, int):
        return other_dtype if k in "iufc" else np.dtype(np.int64)
    if isinstance(value, float):
        return other_dtype if k in "fc" else np.dtype(np.float64)
    if isinstance(value, complex):
        if k == "c":
            return other_dtype
        return np.dtype(np.complex64 if other_dtype == np.float32 else np.complex128)
    raise TypeError


def _is_pyscalar(x):
    return isinstance(x, (bool, int, float, complex))


def _operand(x, like, other_dtype):
    """x as an Array on like's queue: Python scalars weakly typed beside
    other_dtype, everything else as NumPy types it."""
    if isinstance(x, Array):
        return x
    if _is_pyscalar(x):
        dt = _weak_dtype(x, other_dtype)
        a = _from_numpy(np.asarray(x, dtype=dt), like.queue)
        return a
    if isinstance(x, (np.ndarray, np.generic, list, tuple)):
        return _from_numpy(np.asarray(x), like.queue)
    return None


def _binop_fallback(op, a, b):
    """What the C fast path leaves: weak scalars that change the dtype,
    NumPy operands, bools, integer division. NotImplemented for unknown
    operand types."""
    like = a if isinstance(a, Array) else b
    other_a = _np_dtype(b) if isinstance(b, Array) else (np.asarray(b).dtype if not _is_pyscalar(b) else None)
    other_b = _np_dtype(a) if isinstance(a, Array) else (np.asarray(a).dtype if not _is_pyscalar(a) else None)
    try:
        A = _operand(a, like, other_a if other_a is not None else other_b)
        B = _operand(b, like, other_b if other_b is not None else other_a)
    except TypeError:
        return NotImplemented
    if A is None or B is None:
        return NotImplemented
    name = _BIN_NAME[op]
    da, db = _np_dtype(A), _np_dtype(B)
    res = _np_result(name, da, db)
    kind = _KIND[op]
    if kind == _COMPARE:
        cd = np.promote_types(da, db)
        if cd.kind == "c":
            A = A.astype(cd) if da != cd else A
            B = B.astype(cd) if db != cd else B
            if A.shape != B.shape:
                shape = np.broadcast_shapes(A.shape, B.shape)
                A = broadcast_to(A, shape).copy() if A.shape != shape else A
                B = broadcast_to(B, shape).copy() if B.shape != shape else B
        return _k.binary(op, A, B)
    if res == BOOL:
        # bool OP bool: NumPy's logical meaning, through kiln's bool ops
        A, B = _kb(A), _kb(B)
        if name in ("add", "maximum", "bitwise_or", "logical_or"):
            return _k.binary(_k.BINARY_OPS["logical_or"], A, B)
        if name in ("multiply", "minimum", "bitwise_and", "logical_and"):
            return _k.binary(_k.BINARY_OPS["logical_and"], A, B)
        if name in ("bitwise_xor", "logical_xor"):
            return _k.binary(_k.BINARY_OPS["logical_xor"], A, B)
        raise TypeError(f"kiln: {name} of two bool arrays is not supported (NumPy: {name} on bools)")
    if kind == 3:
        raise TypeError(f"{name}: bool operands required, got {da} and {db}")
    if da != res:
        A = A.astype(res)
    if db != res:
        B = B.astype(res)
    if res.kind == "c" and A.shape != B.shape:
        # kiln's complex ops take operands of one shape
        shape = np.broadcast_shapes(A.shape, B.shape)
        A = broadcast_to(A, shape).copy() if A.shape != shape else A
        B = broadcast_to(B, shape).copy() if B.shape != shape else B
    return _k.binary(op, A, B)


def _kb(a):
    """A bool array (KILN_BOOL, or a legacy flagged uint8 one) as KILN_BOOL."""
    if a._dtcode != KILN_BOOL_CODE:
        return _k.astype(a, KILN_BOOL_CODE)
    return a


def _u8(a):
    """A bool array's 0/1 values as uint8."""
    return _k.astype(a, _k.KILN_UINT8) if a._dtcode == KILN_BOOL_CODE else a


def _make_binary(name, code):
    def f(x1, x2, out=None):
        if out is not None:
            x1 = asarray(x1) if not isinstance(x1, Array) else x1
            x2 = asarray(x2, queue=x1.queue) if not isinstance(x2, Array) else x2
            return _k.binary(code, x1, x2, out)
        if not isinstance(x1, Array) and not isinstance(x2, Array):
            x1 = asarray(x1)
        return _k.binop(code, x1, x2)

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"numpy.{name} on the device (kiln_array_binary_out, op {code})."
    return f


def _complex_log(z):
    """log of complex arrays from real ops on the parts: log|z| + i
    atan2(im, re), on the device; C's hypot and atan2 give the standard's
    special cases (infinities, NaNs, signed zeros). (log1p, log2, log10,
    sinh, cosh, tanh and the other complex functions are the C library's.)"""
    re, im = _k.part(z, 0), _k.part(z, 1)
    lr = UFUNCS["log"](UFUNCS["hypot"](re, im))
    th = UFUNCS["arctan2"](im, re)
    out = empty(z.shape, _np_dtype(z), z.queue)
    _k.copy(_k.part(out, 0), lr)
    _k.copy(_k.part(out, 1), th)
    return out


_BOOL_UNARY = {"invert", "logical_not", "positive", "absolute", "isnan", "isinf", "isfinite"}


def _make_unary(name, code, float_only):
    def f(x, out=None):
        x = asarray(x)
        if _is_bool(x):
            if name not in _BOOL_UNARY:
                raise TypeError(f"{name}: bool input is not supported (got a bool array)")
            if name in ("invert", "logical_not"):
                return _k.unary(code, _kb(x))
            if name in ("positive", "absolute"):
                return x.copy()
            x = _u8(x)
        elif name == "logical_not":
            raise TypeError(f"logical_not: bool input required, got {_np_dtype(x)}")
        elif name == "log" and _np_dtype(x).kind == "c" and out is None:
            return _complex_log(x)
        dt = _np_dtype(x)
        rd = _k.result_dtype(0, code, x._dtcode)
        res = FROM_CODE.get(rd) if rd else None
        if res is None:
            res = _np_result(name, dt)
            if res != dt and res != BOOL:
                x = x.astype(res)
        r = _k.unary(code, x, out)
        return r

    f.__name__ = name
    f.__qualname__ = name
    f.__doc__ = f"numpy.{name} on the device (kiln_array_unary_out, op {code})."
    return f


UFUNCS = {}
for _name, _code in _k.BINARY_OPS.items():
    UFUNCS[_name] = _make_binary(_name, _code)
for _name, _code in _k.UNARY_OPS.items():
    UFUNCS[_name] = _make_unary(_name, _code, _k.UNARY_FLOAT_ONLY[_name])
_ALIASES = {
    "divide": "true_divide", "abs": "absolute", "acos": "arccos", "asin": "arcsin", "atan": "arctan",
    "acosh": "arccosh", "asinh": "arcsinh", "atanh": "arctanh", "atan2": "arctan2", "pow": "power",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
    "bitwise_invert": "invert", "round": "rint", "mod": "remainder", "fmod": None,
}
_ALIASES = {k: v for k, v in _ALIASES.items() if v}
for _alias, _target in _ALIASES.items():
    if _target in UFUNCS:
        UFUNCS.setdefault(_alias, UFUNCS[_target])


# --------------------------------------------------------------- indexing


def _normalize_key(key, ndim):
    if not isinstance(key, tuple):
        key = (key,)
    n_ell = builtins.sum(1 for k in key if k is Ellipsis)
    if n_ell > 1:
        raise IndexError("an index can only have a single ellipsis ('...')")
    used = builtins.sum(1 for k in key if k is not None and k is not Ellipsis)
    if used > ndim:
        raise IndexError(f"too many indices for array: array is {ndim}-dimensional, but {used} were indexed")
    out = []
    for k in key:
        if k is Ellipsis:
            out.extend([slice(None)] * (ndim - used))
        else:
            out.append(k)
    if n_ell == 0:
        out.extend([slice(None)] * (ndim - used))
    return out


def _basic_view(a, key):
    shape, strides = a.shape, a._estrides
    off = a._offset
    new_shape, new_strides = [], []
    d = 0
    for k in _normalize_key(key, a.ndim):
        if k is None:
            new_shape.append(1)
            new_strides.append(0)
            continue
        n, st = shape[d], strides[d]
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            if m:
                off += start * st
            new_shape.append(m)
            new_strides.append(st * step)
        else:
            i = operator.index(k)
            if i < -n or i >= n:
                raise IndexError(f"index {i} is out of bounds for axis {d} with size {n}")
            off += (i % n) * st
        d += 1
    return _strided(a, off, new_shape, new_strides)


def _is_basic(key):
    ks = key if isinstance(key, tuple) else (key,)
    for k in ks:
        if k is None or k is Ellipsis or isinstance(k, slice):
            continue
        if isinstance(k, (bool, np.bool_)):
            return False
        if isinstance(k, (Array, np.ndarray)) and (k.ndim != 0 or k.dtype.kind not in "iu"):
            return False
        try:
            operator.index(k)
        except TypeError:
            return False
    return True


def _is_index_array(k):
    return isinstance(k, (Array, np.ndarray, list)) and not isinstance(k, (bool, np.bool_))


def _advanced_key(a, key):
    """Integer-array indexing on any rank (NumPy's rules for integer arrays
    mixed with ints, slices and '...'): the key as kiln_array_index_key
    takes it (a tuple of slices, ints and kiln integer arrays, one per
    axis) and the result's shape, or None when key has no integer array.
    Bounds are checked by the C call (an IndexError). Returns (the array
    to index: a itself, or a view of it with the None axes inserted, keys,
    shape)."""
    ks = key if isinstance(key, tuple) else (key,)
    if not builtins.any(_is_index_array(k) for k in ks):
        return None
    if builtins.any(k is None for k in ks):
        # None (newaxis) as NumPy has it: a new axis of length 1 where it
        # stands, indexed by a full slice. Insert the axes with a view,
        # then index the view with slices in their place.
        full = _normalize_key(ks, a.ndim)
        a = _basic_view(a, tuple(None if k is None else slice(None) for k in full))
        ks = tuple(slice(None) if k is None else k for k in full)
    items = []
    for k in _normalize_key(ks, a.ndim):
        if isinstance(k, slice):
            items.append(k)
        elif _is_index_array(k):
            if not isinstance(k, Array):
                k = np.asarray(k)
                if k.dtype.kind not in "iu" and k.size:
                    raise IndexError("arrays used as indices must be of integer type")
                k = asarray(k.astype(np.int64), queue=a.queue)
            elif _np_dtype(k).kind not in "iu":
                raise IndexError("arrays used as indices must be of integer type")
            items.append(k)
        else:
            if isinstance(k, (bool, np.bool_)):
                raise IndexError("kiln: a bool scalar mixed with integer-array indices is not supported")
            items.append(operator.index(k))
    adv = [i for i, k in enumerate(items) if not isinstance(k, slice)]
    try:
        bshape = np.broadcast_shapes(*[k.shape for k in items if isinstance(k, Array)])
    except ValueError:
        raise IndexError("shape mismatch: indexing arrays could not be broadcast together with "
                         f"shapes {[k.shape for k in items if isinstance(k, Array)]}") from None
    # the result's axes: slices before, the broadcast block, slices after
    # (NumPy puts the block first when the integers and arrays are not adjacent)
    adjacent = adv == list(range(adv[0], adv[-1] + 1))
    lens = [len(range(*k.indices(a.shape[d]))) for d, k in enumerate(items) if isinstance(k, slice)]
    before = builtins.sum(1 for k in items[:adv[0]] if isinstance(k, slice)) if adjacent else 0
    return a, tuple(items), tuple(lens[:before]) + tuple(bshape) + tuple(lens[before:])


def _check_assignable(vshape, shape):
    """NumPy's rule for a[key] = v: v's shape, less leading 1s, broadcasts
    to the selection's (the C put alone would also take any shape of the
    same size, in C order)."""
    vs = tuple(vshape)
    while len(vs) > len(shape) and vs[0] == 1:
        vs = vs[1:]
    fits = len(vs) <= len(shape) and builtins.all(
        x in (1, y) for x, y in zip(vs, shape[len(shape) - len(vs):]))
    if not fits:
        raise ValueError(f"shape mismatch: value array of shape {tuple(vshape)} could not be "
                         f"broadcast to indexing result of shape {tuple(shape)}")


def _index_arrays(a, key):
    """key as one kiln integer array per leading axis (a[i, j] with arrays
    only: one C call, kiln_array_index_many), or None for any other key."""
    if not isinstance(key, tuple) or not 1 <= len(key) <= a.ndim:
        return None
    out = []
    for k in key:
        if not _is_index_array(k):
            return None
        if not isinstance(k, Array):
            k = np.asarray(k)
            if k.dtype.kind not in "iu" or k.ndim == 0:
                return None
            k = asarray(k, queue=a.queue)
        elif k.ndim == 0 or _np_dtype(k).kind not in "iu" or _is_bool(k):
            return None
        out.append(k)
    return tuple(out)


def _getitem(self, key):
    if _is_basic(key):
        return _basic_view(self, key)
    many = _index_arrays(self, key)
    if many is not None:
        return _k.index_many(self, many)
    adv = _advanced_key(self, key) if not (isinstance(key, Array) and _is_bool(key)) and not (
        isinstance(key, np.ndarray) and key.dtype == BOOL) else None
    if adv is not None:
        return _k.index_key(adv[0], adv[1])
    k = key
    if isinstance(k, (list, np.ndarray)):
        k = np.asarray(k)
        if k.dtype.kind not in "biu":
            raise IndexError("arrays used as indices must be of integer (or boolean) type")
        k = asarray(k, queue=self.queue)
    if isinstance(k, Array):
        if _is_bool(k):
            if k.shape != self.shape:
                raise IndexError(f"boolean index of shape {k.shape} does not match the array's {self.shape}")
            return take(_flat(self), flatnonzero(k))
        if self.ndim != 1:
            raise IndexError("integer-array indexing is bound for 1-D arrays only")
        return take(self, k)
    raise IndexError(f"kiln: unsupported index {key!r}")


def _setitem(self, key, value):
    if isinstance(key, (np.ndarray, Array)) and (
        (isinstance(key, np.ndarray) and key.dtype == BOOL) or (isinstance(key, Array) and _is_bool(key))
    ):
        mask = asarray(key, queue=self.queue)
        if mask.shape != self.shape:
            raise IndexError(f"boolean index of shape {mask.shape} does not match the array's {self.shape}")
        if isinstance(value, Array) or isinstance(value, (np.ndarray, list)):
            v = asarray(value, queue=self.queue)
            if v.dtype != self.dtype:
                v = v.astype(self.dtype)
            if v.size != 1 or v.ndim > 1:
                _k.mask_assign(self, mask, v.reshape(-1) if v.ndim != 1 else v)
                return
            value = v.reshape(())
        else:
            value = full((), value, self.dtype, self.queue)
        # one value: self = where(mask, value, self) (every dtype, bool too)
        _k.copy(self, where(mask, value, self))
        return
    if not _is_basic(key):
        base, keys, shape = _advanced_key(self, key)
        v = asarray(value, queue=self.queue)
        if _np_dtype(v) != _np_dtype(self):
            v = v.astype(_np_dtype(self))
        _check_assignable(v.shape, shape)
        if base._contiguous:
            _k.index_key_put(base, keys, v)  # the C put broadcasts v, no copy
            return
        # the C put writes C-contiguous arrays: put into a contiguous copy
        # of the view, then copy it back into the view's elements
        tmp = base.copy()
        _k.index_key_put(tmp, keys, v)
        _k.copy(base, tmp)
        return
    view = _basic_view(self, key)
    if view.size == 0:
        return
    if isinstance(value, Array) or isinstance(value, (np.ndarray, list, tuple)):
        v = asarray(value, queue=self.queue)
        if _np_dtype(v) != _np_dtype(view):
            v = v.astype(_np_dtype(view))
        if v.shape != view.shape:
            v = broadcast_to(v, view.shape)
        _k.copy(view, v)
    else:
        _k.fill(view, _scalar_bytes(value, _np_dtype(view)))


# -------------------------------------------------------------- reductions

_RED = {
    "sum": _k.KILN_REDUCE_SUM, "prod": _k.KILN_REDUCE_PROD, "min": _k.KILN_REDUCE_MIN,
    "max": _k.KILN_REDUCE_MAX, "argmin": _k.KILN_REDUCE_ARGMIN, "argmax": _k.KILN_REDUCE_ARGMAX,
    "any": _k.KILN_REDUCE_ANY, "all": _k.KILN_REDUCE_ALL, "mean": _k.KILN_REDUCE_MEAN,
}
_COMBINE = {"sum": "add", "prod": "multiply", "min": "minimum", "max": "maximum"}


def _axes(axis, ndim):
    if axis is None:
        return None
    ax = (axis,) if isinstance(axis, (int, np.integer)) else tuple(axis)
    out = []
    for x in ax:
        x = operator.index(x)
        if x < -ndim or x >= ndim:
            raise np.exceptions.AxisError(x, ndim) if hasattr(np, "exceptions") else IndexError(x)
        out.append(x % ndim)
    if len(set(out)) != len(out):
        raise ValueError("duplicate value in 'axis'")
    return sorted(out)


def _flat(a):
    if a._contiguous:
        return _k.reshape(a, (a.size,))
    return _k.reshape(a.copy(), (a.size,))


def _reduce(a, name, axis=None, keepdims=False, initial=None, dtype=None):
    a = asarray(a)
    op = _RED[name]
    if dtype is not None:
        a = a.astype(dtype)
    elif name in ("sum", "prod"):
        dt = _np_dtype(a)
        if dt == BOOL or (dt.kind in _INT_KINDS and dt.itemsize < 8):
            a = a.astype(np.uint64 if dt.kind == "u" else np.int64)
    if _is_bool(a) and name in ("min", "max"):
        pass
    if a.size == 0 and name in ("min", "max", "argmin", "argmax") and initial is None:
        raise ValueError(f"zero-size array to reduction operation {name} which has no identity")
    axes = _axes(axis, a.ndim)
    if a.ndim == 0:
        axes = None
    if axes is None or (len(axes) == a.ndim and name not in ("argmin", "argmax")):
        if name == "mean":
            r = _k.reduce_axis(op, _flat(a), 0, False)
        elif initial is not None and name in _COMBINE:
            rd = FROM_CODE[_k.reduce_result_dtype(op, a._dtcode)]
            r = _k.reduce(op, a, _scalar_bytes(initial, rd))
        else:
            r = _k.reduce(op, a)
        if name in ("any", "all"):
            r._isbool = True
        if keepdims and a.ndim:
            r = _strided(r, r._offset, (1,) * a.ndim, (0,) * a.ndim)
        return r
    if name in ("argmin", "argmax") and len(axes) != 1:
        raise ValueError(f"{name}: axis must be an int or None")
    r = a
    for ax in reversed(axes):
        r = _k.reduce_axis(op, r, ax, True)
    if not keepdims:
        shape = tuple(s for i, s in enumerate(a.shape) if i not in axes)
        r = _k.reshape(r, shape)
    if name in ("any", "all"):
        r._isbool = True
    if initial is not None and name in _COMBINE:
        r = UFUNCS[_COMBINE[name]](r, initial)
    return r


def _var(a, axis=None, ddof=0, keepdims=False, std=False):
    a = asarray(a)
    axes = _axes(axis, a.ndim)
    if axes is None or len(axes) == a.ndim:
        r = _k.var_axis(_flat(a), 0, float(ddof), std, False)
        if keepdims:
            r = _strided(r, r._offset, (1,) * a.ndim, (0,) * a.ndim)
        return r
    if len(axes) != 1:
        # several axes: the kept axes first, the reduced ones merged into
        # one last axis (a contiguous copy), then one axis reduction
        keep = [d for d in range(a.ndim) if d not in axes]
        moved = transpose(a, keep + list(axes)).copy()
        n = int(np.prod([a.shape[d] for d in axes]))
        r = _k.var_axis(reshape(moved, [a.shape[d] for d in keep] + [n]), len(keep), float(ddof),
                        std, False)
        if keepdims:
            r = reshape(r, [1 if d in axes else a.shape[d] for d in range(a.ndim)])
        return r
    return _k.var_axis(a, axes[0], float(ddof), std, keepdims)


def sum(a, axis=None, dtype=None, keepdims=False, initial=None):  # noqa: A001
    return _reduce(a, "sum", axis, keepdims, initial, dtype)


def prod(a, axis=None, dtype=None, keepdims=False, initial=None):
    return _reduce(a, "prod", axis, keepdims, initial, dtype)


def min(a, axis=None, keepdims=False, initial=None):  # noqa: A001
    return _reduce(a, "min", axis, keepdims, initial)


def max(a, axis=None, keepdims=False, initial=None):  # noqa: A001
    return _reduce(a, "max", axis, keepdims, initial)


amin, amax = min, max


def argmin(a, axis=None, keepdims=False):
    return _reduce(a, "argmin", axis, keepdims)


def argmax(a, axis=None, keepdims=False):
    return _reduce(a, "argmax", axis, keepdims)


def any(a, axis=None, keepdims=False):  # noqa: A001
    return _reduce(a, "any", axis, keepdims)


def all(a, axis=None, keepdims=False):  # noqa: A001
    return _reduce(a, "all", axis, keepdims)


def mean(a, axis=None, keepdims=False):
    return _reduce(a, "mean", axis, keepdims)


def var(a, axis=None, ddof=0, keepdims=False):
    return _var(a, axis, ddof, keepdims, False)


def std(a, axis=None, ddof=0, keepdims=False):
    return _var(a, axis, ddof, keepdims, True)


# ---------------------------------------------------------- other functions


def astype(a, dtype):
    a = asarray(a)
    dt = np.dtype(dtype)
    if dt == BOOL:
        r = _k.binary_scalar(_k.BINARY_OPS["not_equal"], a, 0.0)
        return r
    src = a
    if _is_bool(a):
        src = _strided(a, a._offset, a.shape, a._estrides)
        src._isbool = False
    return _k.astype(src, code_of(dt))


def where(condition, x, y):
    c = asarray(condition)
    q = c.queue
    if isinstance(x, Array) or not _is_pyscalar(x):
        X = asarray(x, queue=q)
        Y = _operand(y, X, _np_dtype(X))
    elif isinstance(y, Array) or not _is_pyscalar(y):
        Y = asarray(y, queue=q)
        X = _operand(x, Y, _np_dtype(Y))
    else:
        X, Y = asarray(x, queue=q), asarray(y, queue=q)
    res = np.result_type(_np_dtype(X), _np_dtype(Y))
    shape = np.broadcast_shapes(c.shape, X.shape, Y.shape)
    out = empty(shape, res, q)
    if _np_dtype(X) != res:
        X = X.astype(res)
    if _np_dtype(Y) != res:
        Y = Y.astype(res)
    _k.where(out, c, X, Y)
    return out


def clip(a, a_min=None, a_max=None):
    a = asarray(a)
    out = empty_like(a)
    lo = -np.inf if a_min is None else float(a_min)
    hi = np.inf if a_max is None else float(a_max)
    _k.clip(out, a, lo, hi)
    return out


_MODES = {"raise": 0, "clip": 1, "wrap": 2}


def take(a, indices, axis=None, mode="raise"):
    a = asarray(a)
    if axis is not None and not (a.ndim == 1 and axis in (0, -1)):
        return _take_axis(a, indices, axis, mode)
    idx = asarray(indices, queue=a.queue)
    if _np_dtype(idx).kind not in _INT_KINDS:
        raise IndexError("arrays used as indices must be of integer type")
    out = empty(idx.shape, _np_dtype(a), a.queue)
    _k.take(out, a, idx, _MODES[mode])
    return out


def _one_axis(a, axis):
    """axis as an int in [-ndim, ndim) of a, else NumPy's AxisError (a 0-d
    array has none)."""
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    axis = int(axis)
    if not -a.ndim <= axis < a.ndim:
        raise np.exceptions.AxisError(axis, a.ndim)
    return axis


def _take_axis(a, indices, axis, mode):
    """np.take(a, indices, axis) on an n-D array: a[:, ..., idx, ...] with
    idx along axis (one C call, kiln_array_index_key); mode 'clip' and
    'wrap' map the indices into range first, as NumPy does."""
    axis = _one_axis(a, axis)
    axis %= a.ndim
    if mode not in _MODES:
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    idx = asarray(indices, queue=a.queue)
    if _np_dtype(idx).kind not in _INT_KINDS:
        raise IndexError("arrays used as indices must be of integer type")
    n = a.shape[axis]
    if mode != "raise" and n == 0 and idx.size:
        raise IndexError("cannot do a non-empty take from an empty axes.")
    if idx.dtype != np.int64:
        idx = idx.astype(np.int64)
    if mode == "clip":
        idx = clip(idx, 0, n - 1)
    elif mode == "wrap":
        idx = idx % n
    if idx.ndim == 0:  # a scalar index drops the axis, as NumPy
        return a[(slice(None),) * axis + (int(idx),)].copy()
    return a[(slice(None),) * axis + (idx,)]


def _common(arrays, q):
    arrs = [asarray(x, queue=q) for x in arrays]
    res = np.result_type(*[_np_dtype(x) for x in arrs])
    return [x if _np_dtype(x) == res else x.astype(res) for x in arrs], res


def concatenate(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to concatenate")
    q = next((x.queue for x in arrays if isinstance(x, Array)), None)
    arrs, res = _common(arrays, q)
    if axis is None:
        arrs = [_flat(x) for x in arrs]
        axis = 0
    r = _k.join(arrs, int(axis), False)
    r._isbool = res == BOOL
    return r


def stack(arrays, axis=0):
    arrays = list(arrays)
    if not arrays:
        raise ValueError("need at least one array to stack")
    q = next((x.queue for x in arrays if isinstance(x, Array)), None)
    arrs, res = _common(arrays, q)
    r = _k.join(arrs, int(axis), True)
    r._isbool = res == BOOL
    return r


def sort(a, axis=-1, descending=False, stable=True):
    a = asarray(a)
    if axis is None:
        a, axis = _flat(a), -1
    if a.ndim == 0:
        raise np.exceptions.AxisError(axis, 0)
    if axis not in (-1, a.ndim - 1):
        return swapaxes(sort(swapaxes(a, axis, -1).copy(), -1, descending), axis, -1).copy()
    out = empty_like(a)
    _k.sort(out, a, descending)
    return out


def argsort(a, axis=-1, descending=False, stable=True):
    a = asarray(a)
    if axis is None:
        a, axis = _flat(a), -1
    axis = _one_axis(a, axis)
    if axis not in (-1, a.ndim - 1):
        # the C argsort works along the last axis: move the axis there (a
        # contiguous copy), sort, and move the indices back
        moved = argsort(swapaxes(a, axis, -1).copy(), -1, descending)
        return swapaxes(moved, axis, -1).copy()
    out = empty(a.shape, np.int64, a.queue)
    _k.argsort(out, a, descending)
    return out


def _kth_list(kth, n):
    ks = np.atleast_1d(np.asarray(kth))
    if ks.dtype.kind == "b":
        raise ValueError("Booleans unacceptable as partition index")
    if ks.dtype.kind not in "iu" or ks.ndim != 1:
        raise TypeError("Partition index must be integer")
    if n == 0:  # NumPy checks nothing on an empty axis
        return ks
    for k in ks.tolist():
        if not -n <= k < n:
            raise ValueError(f"kth(={k}) out of bounds ({n})")
    return ks


def _partition_opts(kind, order):
    if kind != "introselect":
        raise ValueError(f"partition: kind must be 'introselect', not {kind!r}")
    if order is not None:
        raise NotImplementedError("partition: order= (structured dtypes) is not supported")


def _partition_input(a, axis, kind, order):
    """(a as a kiln array, the checked axis) for partition/argpartition;
    axis=None flattens first."""
    _partition_opts(kind, order)
    a = asarray(a)
    if axis is None:
        a, axis = _flat(a), -1
    axis = _one_axis(a, axis)
    return a, axis


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """np.partition(a, kth, axis): a copy with the element at each kth in
    its sorted place, the smaller ones before it and the larger after
    (NaNs last, as NumPy). kiln's C library has no selection (its topk
    sorts whole rows), so this sorts along the axis: the result is one
    valid partition (the sorted one); NumPy leaves the order within each
    side unspecified. axis=None flattens first. kind and order as
    NumPy's (only "introselect" and None)."""
    a, axis = _partition_input(a, axis, kind, order)
    _kth_list(kth, a.shape[axis])
    return sort(a, axis)


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """np.argpartition(a, kth, axis) (int64 indices; the stable sorting
    permutation along the axis, one valid argpartition)."""
    a, axis = _partition_input(a, axis, kind, order)
    _kth_list(kth, a.shape[axis])
    return argsort(a, axis)


def searchsorted(a, v, side="left"):
    a = asarray(a)
    v = asarray(v, queue=a.queue)
    if _np_dtype(v) != _np_dtype(a):
        v = v.astype(_np_dtype(a))
    out = empty(v.shape, np.int64, a.queue)
    _k.searchsorted(out, a, v, side == "right")
    return out


def cumsum(a, axis=None, dtype=None):
    return _cumulative(a, axis, dtype, False)


def cumprod(a, axis=None, dtype=None):
    return _cumulative(a, axis, dtype, True)


def _cumulative(a, axis, dtype, prod):
    a = asarray(a)
    if axis is None:
        a = _flat(a)
    dt = np.dtype(dtype) if dtype is not None else _np_dtype(a)
    if dtype is None and (dt == BOOL or (dt.kind in _INT_KINDS and dt.itemsize < 8)):
        dt = np.dtype(np.uint64 if dt.kind == "u" else np.int64)
    if a.ndim != 1:
        return _cumulative_axis(a, axis, dt, prod)
    if dt != _np_dtype(a):
        a = a.astype(dt)
    out = empty_like(a)
    _k.cumulative(out, a, False, prod)
    return out


_SEG_SCANS = {}


def _cumulative_axis(a, axis, dt, prod):
    """cumsum/cumprod along one axis of an n-D array: the axis moved last
    (a contiguous copy), then one segmented scan over the rows (a segment
    starts every n elements), then moved back."""
    axis = _one_axis(a, axis)
    if dt.kind not in "iuf" or dt.itemsize < 4:
        raise NotImplementedError(f"cumsum/cumprod along an axis: dtype {dt} is not bound "
                                  "(integers of 32/64 bits, float32, float64)")
    moved = swapaxes(a, axis, -1).astype(dt)  # astype copies: contiguous
    out = empty(moved.shape, dt, a.queue)
    if moved.size:
        from ._kernels import GenericScanKernel
        from ._dtypes import C_NAME

        key = (a.queue.context, dt, prod)
        knl = _SEG_SCANS.get(key)
        if knl is None:
            t = C_NAME[dt]
            knl = GenericScanKernel(a.queue.context, dt, f"const {t} *in, {t} *out, long row",
                                    "in[i]", "a*b" if prod else "a+b", "1" if prod else "0",
                                    "out[i] = item", is_segment_start_expr="i % row == 0",
                                    name_prefix="cumprod_rows" if prod else "cumsum_rows")
            _SEG_SCANS[key] = knl
        knl(_flat(moved), _flat(out), np.int64(moved.shape[-1]), queue=a.queue)
    return swapaxes(out, axis, -1).copy()


_SELECT_CACHE = {}


def flatnonzero(a):
    """Indices (int64, C order) of the non-zero elements of a (np.flatnonzero).
    Blocks: the result's length depends on the data."""
    a = asarray(a)
    mask = a if (_is_bool(a) or _np_dtype(a) == np.uint8) and a._contiguous else astype(a, bool)
    if not mask._contiguous:
        mask = mask.copy()
    mask = _k.reshape(mask, (mask.size,)) if mask.ndim != 1 else mask
    if _is_bool(mask):
        mask = _strided(mask, mask._offset, mask.shape, mask._estrides)
        mask._isbool = False
    ctx = a.queue.context
    sel = _SELECT_CACHE.get(ctx)
    if sel is None:
        sel = _SELECT_CACHE[ctx] = _k.select_create(ctx, "const uchar *m, long *idx", "m[i] != 0",
                                                    "idx[out_index] = i", None, None, "kiln_py_nonzero")
    n = mask.size
    idx = empty(n, np.int64, a.queue)
    c = sel.run(a.queue, n, (mask, idx), None)
    return _strided(idx, idx._offset, (c,), (1,))


def nonzero(a):
    a = asarray(a)
    flat = flatnonzero(a)
    if a.ndim <= 1:
        return (flat,)
    out, rest = [], flat
    div = _k.BINARY_OPS["true_divide"]  # on int64 arrays kiln divides as integers
    for s in np.cumprod((1,) + a.shape[::-1])[:-1][::-1]:
        q = _k.binary_scalar(div, rest, float(s)) if s != 1 else rest
        out.append(q)
        if s != 1:
            rest = rest - q * int(s)
    return tuple(out)


def unique(a, return_counts=False):
    """Sorted unique elements of a (flattened), as np.unique. Blocks."""
    s = sort(asarray(a), axis=None)
    out = empty(s.size, _np_dtype(s), s.queue)
    counts = empty(s.size, np.int64, s.queue) if return_counts else None
    c = _k.unique(out, s, counts) if s.size else 0
    r = _strided(out, out._offset, (c,), (1,))
    r._isbool = _is_bool(s)
    if return_counts:
        return r, _strided(counts, counts._offset, (c,), (1,))
    return r


def reduce_by_key(keys, values, op="sum"):
    """(unique_keys, reduced) over runs of equal consecutive keys (1-D, as
    many values as keys; sort the keys first for a full group-by): each
    run's key and its values combined with op ("sum", "prod", "min",
    "max"; NaN propagates in min/max), in the values' dtype
    (kiln_array_reduce_by_key_out). Blocks: the number of runs is the
    result's length."""
    k = asarray(keys)
    v = asarray(values, queue=k.queue)
    if op not in ("sum", "prod", "min", "max"):
        raise ValueError(f"reduce_by_key: op must be 'sum', 'prod', 'min' or 'max', not {op!r}")
    if k.ndim != 1 or v.ndim != 1 or k.size != v.size:
        raise ValueError(f"reduce_by_key: keys and values must be 1-D of one length, not "
                         f"{k.shape} and {v.shape}")
    ok = empty(k.size, _np_dtype(k), k.queue)
    ov = empty(v.size, _np_dtype(v), k.queue)
    c = _k.reduce_by_key(ok, ov, k, v, _RED[op]) if k.size else 0
    rk = _strided(ok, ok._offset, (c,), (1,))
    rk._isbool = _is_bool(k)
    rv = _strided(ov, ov._offset, (c,), (1,))
    rv._isbool = _is_bool(v)
    return rk, rv


def topk(a, k, largest=True):
    """(values, indices) of the k largest (smallest) items along the last axis."""
    a = asarray(a)
    shape = a.shape[:-1] + (int(k),)
    v = empty(shape, _np_dtype(a), a.queue)
    i = empty(shape, np.int64, a.queue)
    _k.topk(v, i, a, int(k), bool(largest))
    return v, i


def histogram(a, bins=10, range=None, weights=None):
    """(hist, bin_edges) as np.histogram: bins a count (edges as NumPy
    computes them, on the host; hist on the device) or a 1-D sequence or
    array (NumPy's or kiln's) of monotonically increasing edges (range is
    then ignored, as NumPy): bin k holds edges[k] <= x < edges[k+1], the
    last one also x == edges[-1]. The edges are compared as float64;
    bin_edges comes back as given (a kiln Array stays one)."""
    a = asarray(a)
    if isinstance(bins, str):
        bins, range = _estimated_bins(a, bins, range)
    if not isinstance(bins, (int, np.integer)):
        return _histogram_edges(a, bins, weights)
    if range is None:
        if a.size:
            lo, hi = float(min(a)), float(max(a))
        else:
            lo, hi = 0.0, 1.0
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
    else:
        lo, hi = float(range[0]), float(range[1])
    w = asarray(weights, queue=a.queue) if weights is not None else None
    h = _k.histogram(a, int(bins), lo, hi, w)
    return h, np.histogram_bin_edges(np.empty(0), bins, (lo, hi))


_ESTIMATORS = ("auto", "fd", "doane", "scott", "rice", "sturges", "sqrt")


def _estimated_bins(a, name, range):
    """np.histogram's bin estimators (NumPy's documented rules: a bin width
    from the data in range, then ceil(span / width) equal bins): the
    statistics (size, min, max, mean, std, the quartiles) come from the
    device, the arithmetic is NumPy's float64 on the host. 'stone' (an
    optimisation over bin counts) is not bound."""
    if name == "stone":
        raise NotImplementedError("histogram: the 'stone' estimator is not bound")
    if name not in _ESTIMATORS:
        raise ValueError(f"{name!r} is not a valid estimator for `bins`")
    x = _flat(a)
    if range is not None:
        lo, hi = float(range[0]), float(range[1])
        if lo > hi:
            raise ValueError("max must be larger than min in range parameter.")
        x = x[(x >= lo) & (x <= hi)]
    if x.size == 0:
        lo, hi = (0.0, 1.0) if range is None else (lo, hi)
        return 1, (lo, hi)
    x64 = x.astype(np.float64)
    if range is None:
        lo, hi = float(min(x64)), float(max(x64))
    n = x.size
    span = float(max(x64)) - float(min(x64))  # the data's peak to peak
    width = _bin_width(name, x64, n, span)
    first, last = (lo - 0.5, hi + 0.5) if lo == hi else (lo, hi)
    count = int(np.ceil((last - first) / width)) if width else 1
    return count, (first, last)


def _bin_width(name, x64, n, span):
    def sturges():
        return span / (np.log2(n) + 1.0)

    def fd():
        s = sort(x64).get()  # the quartiles as np.percentile's linear rule
        q75, q25 = np.percentile(s, [75, 25])
        return 2.0 * (q75 - q25) * n ** (-1.0 / 3.0)

    if name == "sqrt":
        return span / np.sqrt(n)
    if name == "sturges":
        return sturges()
    if name == "rice":
        return span / (2.0 * n ** (1.0 / 3.0))
    if name == "scott":
        return (24.0 * np.pi ** 0.5 / n) ** (1.0 / 3.0) * float(std(x64))
    if name == "fd":
        return fd()
    if name == "doane":
        if n <= 2:
            return 0.0
        sigma = float(std(x64))
        if sigma <= 0.0:
            return 0.0
        g1 = float(mean(((x64 - float(mean(x64))) / sigma) ** 3))
        sg1 = np.sqrt(6.0 * (n - 2) / ((n + 1.0) * (n + 3)))
        return span / (1.0 + np.log2(n) + np.log2(1.0 + np.absolute(g1) / sg1))
    fd_w, st_w = fd(), sturges()  # "auto"
    return builtins.min(fd_w, st_w) if fd_w else st_w


def _histogram_edges(a, bins, weights):
    given = bins
    host = bins.get() if isinstance(bins, Array) else np.asarray(bins)
    if host.ndim != 1:
        raise ValueError("`bins` must be 1d, when an array")
    if host.size < 2:
        raise ValueError("histogram: `bins` needs at least 2 edges, when an array")
    if host.dtype.kind not in "biuf":
        raise TypeError(f"histogram: bins of dtype {host.dtype} are not edges")
    host = host.astype(np.float64)
    if np.any(host[:-1] > host[1:]):
        raise ValueError("`bins` must increase monotonically, when an array")
    if np.isnan(host).any():
        raise ValueError("histogram: the edges must not be NaN")
    edges = asarray(host, queue=a.queue)
    w = asarray(weights, queue=a.queue) if weights is not None else None
    h = _k.histogram_edges(a, edges, w)
    return h, given if isinstance(given, Array) else np.asarray(given)


def bincount(x, weights=None, minlength=0):
    x = asarray(x)
    w = asarray(weights, queue=x.queue) if weights is not None else None
    return _k.bincount(x, w, int(minlength))


_PUT_MODES = {"raise": 0, "clip": 1, "wrap": 2}


def put(a, ind, v, mode="raise"):
    """a.flat[ind] = v (np.put; the last of repeated indices wins)."""
    idx = asarray(ind, queue=a.queue)
    vals = asarray(v, queue=a.queue)
    if _np_dtype(vals) != _np_dtype(a):
        vals = vals.astype(_np_dtype(a))
    _k.put(a, idx, vals, _PUT_MODES[mode], 1)


def add_at(a, ind, v):
    """np.add.at(a, ind, v) for a flat index: every repeat counts (atomics)."""
    idx = asarray(ind, queue=a.queue)
    vals = asarray(v, queue=a.queue)
    if _np_dtype(vals) != _np_dtype(a):
        vals = vals.astype(_np_dtype(a))
    _k.put(a, idx, vals, 0, 2)


# ----------------------------------------- array API standard names (views)

def expand_dims(a, axis=0):
    a = asarray(a)
    nd = a.ndim + 1
    axis = operator.index(axis)
    if axis < -nd or axis >= nd:
        raise IndexError(f"axis {axis} is out of bounds for array of dimension {nd}")
    axis %= nd
    shape = a.shape[:axis] + (1,) + a.shape[axis:]
    strides = a._estrides[:axis] + (0,) + a._estrides[axis:]
    return _strided(a, a._offset, shape, strides)


def squeeze(a, axis=None):
    a = asarray(a)
    if axis is None:
        keep = [i for i, n in enumerate(a.shape) if n != 1]
    else:
        ax = _axes(axis, a.ndim)
        for x in ax:
            if a.shape[x] != 1:
                raise ValueError("cannot select an axis to squeeze out which has size not equal to one")
        keep = [i for i in range(a.ndim) if i not in ax]
    return _strided(a, a._offset, [a.shape[i] for i in keep], [a._estrides[i] for i in keep])


def flip(a, axis=None):
    a = asarray(a)
    axes = range(a.ndim) if axis is None else _axes(axis, a.ndim)
    off, strides = a._offset, list(a._estrides)
    for x in axes:
        if a.shape[x] > 1:
            off += (a.shape[x] - 1) * strides[x]
        strides[x] = -strides[x]
    return _strided(a, off, a.shape, strides)


def permute_dims(a, axes):
    return transpose(a, axes)


def matrix_transpose(a):
    return swapaxes(a, -1, -2)


concat = concatenate


def linspace(start, stop, num=50, endpoint=True, dtype=None, queue=None):
    return asarray(np.linspace(start, stop, num, endpoint=endpoint, dtype=dtype), queue=queue)


def eye(n_rows, n_cols=None, k=0, dtype=np.float64, queue=None):
    return asarray(np.eye(n_rows, n_cols, k, dtype=dtype), queue=queue)


def isdtype(dtype, kind):
    return np.isdtype(np.dtype(dtype), kind) if hasattr(np, "isdtype") else np.dtype(dtype).kind in kind


def swapaxes(a, axis1, axis2):
    a = asarray(a)
    n = a.ndim
    axis1, axis2 = axis1 % n, axis2 % n
    shape, strides = list(a.shape), list(a._estrides)
    shape[axis1], shape[axis2] = shape[axis2], shape[axis1]
    strides[axis1], strides[axis2] = strides[axis2], strides[axis1]
    return _strided(a, a._offset, shape, strides)


def transpose(a, axes=None):
    a = asarray(a)
    axes = tuple(reversed(range(a.ndim))) if axes is None else tuple(x % a.ndim for x in axes)
    if sorted(axes) != list(range(a.ndim)):
        raise ValueError("axes don't match array")
    return _strided(a, a._offset, [a.shape[i] for i in axes], [a._estrides[i] for i in axes])


def reshape(a, shape):
    a = asarray(a)
    shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(int(s) for s in shape)
    if shape.count(-1) > 1:
        raise ValueError("can only specify one unknown dimension")
    if -1 in shape:
        known = int(np.prod([s for s in shape if s != -1]))
        if known == 0 or a.size % known:
            raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
        shape = tuple(a.size // known if s == -1 else s for s in shape)
    if int(np.prod(shape)) != a.size:
        raise ValueError(f"cannot reshape array of size {a.size} into shape {shape}")
    if shape == a.shape:
        return a
    src = a if a._contiguous else a.copy()
    return _k.reshape(src, shape)


def matmul(x1, x2):
    a = asarray(x1)
    b = asarray(x2, queue=a.queue)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError("matmul: Input operand does not have enough dimensions")
    res = np.result_type(_np_dtype(a), _np_dtype(b))
    if res.kind not in "fc":
        raise TypeError(f"matmul of {res} is not supported by kiln's BLAS (float and complex are)")
    if _np_dtype(a) != res:
        a = a.astype(res)
    if _np_dtype(b) != res:
        b = b.astype(res)
    squeeze_a = a.ndim == 1
    squeeze_b = b.ndim == 1
    if squeeze_a:
        a = reshape(a, (1, a.shape[0]))
    if squeeze_b:
        b = reshape(b, (b.shape[0], 1))
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not fit (k {a.shape[-1]} != {b.shape[-2]})")
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    out = empty(batch + (a.shape[-2], b.shape[-1]), res, a.queue)
    if out.size:
        _k.matmul(out, a, b)
    shape = out.shape
    if squeeze_a:
        shape = shape[:-2] + shape[-1:]
    if squeeze_b:
        shape = shape[:-1]
    return reshape(out, shape) if shape != out.shape else out


def dot(a, b):
    a = asarray(a)
    b = asarray(b, queue=a.queue)
    if a.ndim == 1 and b.ndim == 1:
        res = np.result_type(_np_dtype(a), _np_dtype(b))
        if _np_dtype(a) != res:
            a = a.astype(res)
        if _np_dtype(b) != res:
            b = b.astype(res)
        return _k.dot(a, b)
    return matmul(a, b)


def get(a):
    out = np.empty(a.shape, dtype=_np_dtype(a))
    _k.read(a, out.view(np.uint8) if out.dtype == BOOL else out)
    return out


# ------------------------------------------------------------ DLPack


def _dlpack_device(a):
    info = a.queue.device.info()
    if info["type"] == "cpu":
        return (1, 0)
    if info["backend"] == "cuda":
        return (2, int(info["id"].split(":")[-1]))
    return (4, 0)


def __dlpack__(self, *, stream=None, max_version=None, dl_device=None, copy=None):
    if dl_device is not None and tuple(dl_device) != _dlpack_device(self):
        raise BufferError(f"kiln: cannot export to device {dl_device} (the array is on {_dlpack_device(self)})")
    src = self.copy() if copy else self
    versioned = max_version is not None and max_version[0] >= 1
    # kiln blocks until the queue's earlier work has ended, so any consumer
    # stream may read at once: the stream handshake needs no extra wait.
    return _k.to_dlpack(src, versioned)


def from_dlpack(x, queue=None, copy=None, device=None):
    """A kiln Array over another framework's memory (zero copy where the
    device can address it: NumPy on CPU devices, CuPy/PyTorch on CUDA)."""
    q = _queue(queue)
    if hasattr(x, "__dlpack__"):
        try:
            cap = x.__dlpack__(max_version=(1, 0))
        except TypeError:
            cap = x.__dlpack__()
        zerod = getattr(x, "ndim", 1) == 0
        isbool = getattr(x, "dtype", None) == BOOL
    else:
        cap, zerod, isbool = x, False, False
    a = _k.from_dlpack(q, cap, zerod)
    if isbool:
        a._isbool = True
    return a


# ------------------------------------------------------- the Array's methods


class _Methods:
    """Attached to kiln.Array (the extension's type) at import."""

    @property
    def dtype(self):
        return _np_dtype(self)

    @property
    def strides(self):
        """In bytes, as NumPy's."""
        return tuple(s * self.itemsize for s in self._estrides)

    @property
    def device(self):
        return self.queue.device

    @property
    def T(self):
        return transpose(self)

    @property
    def mT(self):
        return swapaxes(self, -1, -2)

    def get(self):
        """A NumPy copy (Blocks)."""
        return get(self)

    to_numpy = get

    def __array__(self, dtype=None, copy=None):
        r = get(self)
        return r if dtype is None else r.astype(dtype, copy=False)

    def astype(self, dtype, copy=True):
        if not copy and np.dtype(dtype) == self.dtype:
            return self
        return astype(self, dtype)

    def copy(self):
        out = _k.empty(self.queue, self._dtcode, self.shape if self.ndim else ())
        _k.copy(out, self)
        out._isbool = _is_bool(self)
        return out

    def fill(self, value):
        _k.fill(self, _scalar_bytes(value, self.dtype))

    def reshape(self, *shape):
        if len(shape) == 1 and not isinstance(shape[0], (int, np.integer)):
            shape = shape[0]
        return reshape(self, shape)

    def ravel(self):
        return reshape(self, (-1,))

    flatten = ravel

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], (int, np.integer)):
            axes = axes[0]
        return transpose(self, axes or None)

    swapaxes = swapaxes
    sum = sum
    prod = prod
    min = min
    max = max
    argmin = argmin
    argmax = argmax
    mean = mean
    var = var
    std = std
    any = any
    all = all
    cumsum = cumsum
    cumprod = cumprod
    clip = clip
    take = take
    nonzero = nonzero
    put = put

    def sort(self, axis=-1):
        """Sorts in place (NumPy's ndarray.sort)."""
        s = sort(self, axis)
        _k.copy(self, s)

    argsort = argsort

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partitions in place (NumPy's ndarray.partition)."""
        _k.copy(self, partition(self, kth, axis, kind, order))

    argpartition = argpartition

    def read_future(self):
        """A kiln.Future of this array's data (kiln.read_future)."""
        from ._future import read_future

        return read_future(self)

    dot = dot
    __getitem__ = _getitem
    __setitem__ = _setitem

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def _inplace(self, name, other):
        code = _k.BINARY_OPS[name]
        o = _operand(other, self, _np_dtype(self))
        if o is None:
            return NotImplemented
        if np.result_type(_np_result(name, _np_dtype(self), _np_dtype(o))) != _np_dtype(self):
            raise TypeError(f"Cannot cast ufunc '{name}' output from {_np_result(name, _np_dtype(self), _np_dtype(o))} to {self.dtype} with casting rule 'same_kind'")
        _k.binary(code, self, o, self)
        return self

    def __iadd__(self, other):
        return self._inplace("add", other)

    def __isub__(self, other):
        return self._inplace("subtract", other)

    def __imul__(self, other):
        return self._inplace("multiply", other)

    def __itruediv__(self, other):
        return self._inplace("true_divide", other)

    def __divmod__(self, other):
        return (UFUNCS["floor_divide"](self, other), UFUNCS["remainder"](self, other))

    def __rdivmod__(self, other):
        return (UFUNCS["floor_divide"](other, self), UFUNCS["remainder"](other, self))

    def __pow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return _binop_or_ni("power", self, other)

    def __rpow__(self, other, mod=None):
        if mod is not None:
            return NotImplemented
        return _binop_or_ni("power", other, self)

    def to_device(self, device, stream=None):
        """The array on device (this one where it is already there)."""
        if device is None or device == self.device or device is self.queue:
            return self
        from ._array_api import _queue_of
        return asarray(self.get(), queue=_queue_of(device))

    def __invert__(self):
        return UFUNCS["invert"](self)


    def __bool__(self):
        if self.size != 1:
            raise ValueError("The truth value of an array with more than one element is ambiguous. Use a.any() or a.all()")
        return bool(get(self).reshape(()))

    def __float__(self):
        return float(self._item())

    def __int__(self):
        return int(self._item())

    def __complex__(self):
        return complex(self._item())

    def __index__(self):
        if self.dtype.kind not in "iu" or self.ndim != 0:  # NumPy: 0-d integer arrays only
            raise TypeError("only integer scalar arrays can be converted to a scalar index")
        return int(self._item())

    def _item(self):
        if self.size != 1:
            raise TypeError("only length-1 arrays can be converted to Python scalars")
        return get(self).reshape(())[()]

    def item(self):
        return self._item().item()

    def tolist(self):
        return get(self).tolist()

    def __iter__(self):
        if self.ndim == 0:
            raise TypeError("iteration over a 0-d array")
        for i in range(self.shape[0]):
            yield self[i]

    def __repr__(self):
        body = np.array2string(get(self), separator=", ", prefix="kiln.Array(")
        return f"kiln.Array({body}, dtype={self.dtype})"

    def __str__(self):
        return str(get(self))

    def __format__(self, spec):
        if self.ndim == 0:
            return format(self._item(), spec)
        return format(str(self), spec)

    __hash__ = None

    def __dlpack_device__(self):
        return _dlpack_device(self)

    @property
    def __cuda_array_interface__(self):
        """Version 3 (CuPy, PyTorch, Numba) for arrays on CUDA devices;
        AttributeError elsewhere. kiln has waited for the queue's earlier
        work, so the consumer need not synchronise (stream None)."""
        ptr = _k.cuda_pointer(self)
        typestr = ("|b1" if _is_bool(self) else _np_dtype(self).str)
        return {"shape": self.shape, "typestr": typestr, "data": (ptr, False), "version": 3,
                "strides": None if self._contiguous else self.strides, "stream": None}

    __dlpack__ = __dlpack__

    def __array_namespace__(self, api_version=None):
        import kiln

        return kiln

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        f = UFUNCS.get(ufunc.__name__)
        if method != "__call__" or f is None or kwargs.get("out") is not None:
            return NotImplemented
        kw = {k: v for k, v in kwargs.items() if k != "out"}
        if kw:
            return NotImplemented
        q = next(x.queue for x in inputs if isinstance(x, Array))
        args = [x if isinstance(x, Array) or _is_pyscalar(x) else asarray(x, queue=q) for x in inputs]
        return f(*args)

    def __array_function__(self, func, types, args, kwargs):
        import kiln

        f = getattr(kiln, func.__name__, None)
        if f is None or not callable(f) or f is getattr(np, func.__name__, None):
            return NotImplemented
        return f(*args, **kwargs)


def _binop_or_ni(name, a, b):
    return _k.binop(_k.BINARY_OPS[name], a, b)


def _add_operators(cls):
    for dunder, name in (("floordiv", "floor_divide"), ("mod", "remainder"), ("and", "bitwise_and"),
                         ("or", "bitwise_or"), ("xor", "bitwise_xor"), ("lshift", "left_shift"),
                         ("rshift", "right_shift")):
        code = _k.BINARY_OPS[name]

        def fwd(self, other, _c=code):
            return _k.binop(_c, self, other)

        def rev(self, other, _c=code):
            return _k.binop(_c, other, self)

        def inp(self, other, _n=name):
            return self._inplace(_n, other)

        setattr(cls, f"__{dunder}__", fwd)
        setattr(cls, f"__r{dunder}__", rev)
        setattr(cls, f"__i{dunder}__", inp)
    cls.__ipow__ = lambda self, other: self._inplace("power", other)


def _attach():
    for name, value in vars(_Methods).items():
        if name in ("__dict__", "__weakref__", "__module__", "__doc__", "__qualname__"):
            continue
        setattr(Array, name, value)
    for name in ("__radd__", "__rsub__", "__rmul__", "__rtruediv__"):
        pass  # the C number slots take either operand order


_attach()
_add_operators(Array)
_k._set_hooks(__import__("kiln._errors", fromlist=["_make_error"])._make_error, _binop_fallback)
