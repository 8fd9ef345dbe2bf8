"""kiln for Python: arrays, kernels and parallel algorithms on GPUs and
multicore CPUs (OpenCL, CUDA), over libkiln.

    import kiln, numpy as np
    a = kiln.asarray(np.arange(10, dtype=np.float32))
    print((a * 2 + 1).sum())

Importing kiln touches no device: the backends are loaded on first use.
The device is $KILN_DEVICE's, else kiln's default (a GPU first)."""
import os as _os

from . import _kiln
from ._errors import *  # noqa: F401,F403
from ._errors import KilnError, error_class  # noqa: F401
from ._core import (  # noqa: F401
    Context, Device, Event, Queue, devices, finish, get_default_queue, get_device,
    set_default_queue, stop_trace, trace, wait_for_events,
)
from ._array import (  # noqa: F401
    UFUNCS as _UFUNCS, Array, amax, amin, any, all, arange, argmax, argmin, argsort, array,
    asarray, astype, broadcast_to, clip, concatenate, cumprod, cumsum, dot, empty, empty_like,
    add_at, bincount, concat, expand_dims, eye, flip, isdtype, linspace, matrix_transpose, permute_dims, squeeze, flatnonzero, from_dlpack, full, full_like, histogram, matmul, nonzero, partition, argpartition, put, topk, unique, max, mean, min, ones, ones_like, prod, reshape,
    reduce_by_key, searchsorted, sort, stack, std, sum, swapaxes, take, to_device, transpose, var, where, zeros,
    zeros_like,
)
from ._kernels import (  # noqa: F401
    ElementwiseKernel, ExclusiveScanKernel, GenericScanKernel, InclusiveScanKernel, Kernel,
    LocalMemory, Program, ReductionKernel,
)
from ._toolkit import HashTable, ListBuilder  # noqa: F401
from ._future import Future, future_ready, read_future, when_all, when_any  # noqa: F401
from ._offload import Map, Offload, alloc, data, from_, present, to, tofrom  # noqa: F401
from . import fft, linalg, random  # noqa: F401

globals().update(_UFUNCS)
from . import _array_api  # noqa: E402

globals().update({_n: getattr(_array_api, _n) for _n in _array_api.NAMES})
globals().update(_array_api.ELEMENTWISE)

__version__ = "0.1.0"
__array_api_version__ = "2023.12"  # the standard's version this namespace follows (docs/python.md)
#: the version of the libkiln this package carries
kiln_version = _kiln.version()

import numpy as _np  # noqa: E402

bool_ = _np.bool_
int8, uint8, int16, uint16 = _np.int8, _np.uint8, _np.int16, _np.uint16
int32, uint32, int64, uint64 = _np.int32, _np.uint32, _np.int64, _np.uint64
float16, float32, float64 = _np.float16, _np.float32, _np.float64
complex64, complex128 = _np.complex64, _np.complex128
e, pi, inf, nan = _np.e, _np.pi, _np.inf, _np.nan
newaxis = None


def get_include():
    """The directory of kiln.h (for C extensions and Cython: also put
    get_library_dir() on the link path and link -lkiln)."""
    return _os.path.join(_os.path.dirname(__file__), "include")


def get_library_dir():
    """The directory holding libkiln.so."""
    return _os.path.dirname(__file__)


def get_pool_stats(queue=None):
    """Memory pool statistics of the default queue's context (kiln_pool_get_stats)."""
    return (queue or get_default_queue()).context.pool_stats()


def trim_pool(keep_bytes=0, queue=None):
    """Hands cached pool blocks back to the driver; returns the bytes freed."""
    return (queue or get_default_queue()).context.pool_trim(keep_bytes)


# the standard's name for the bool dtype (last: shadows the builtin in this module only)
globals()["bool"] = _np.bool_
