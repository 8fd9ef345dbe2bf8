"""kiln.distributed: kiln_mpi (docs/distributed.md) over mpi4py communicators.

One device per rank, collectives through kiln (staged through page-locked
host memory, or NCCL between CUDA devices), and 1-D / row-block
distributed arrays with the global sort, scan, sum, histogram and
redistribution, from Python::

    import mpi4py
    mpi4py.rc.thread_level = "multiple"     # kiln needs MPI_THREAD_MULTIPLE
    from mpi4py import MPI
    import kiln.distributed as kd

    comm = kd.Communicator(MPI.COMM_WORLD)  # this rank's device
    total = comm.allreduce(np.arange(5.0))  # on every rank
    d = comm.scatter(data if comm.rank == 0 else None, root=0)
    d.sort()
    out = d.gather(root=0)                  # a NumPy array on rank 0

It calls libkiln_mpi through ctypes: the package's own copy (built beside
libkiln when the build found MPI), else $KILN_MPI_LIBRARY, else
libkiln_mpi.so.0 on the loader's path. Collectives take NumPy arrays (and
return NumPy arrays) or kiln arrays made on the communicator's queue
(``kiln.asarray(x, queue=comm.queue)``: kiln_mpi works in its own context
on the rank's device), which stay on the device: the collective runs on
the array's queue and returns a kiln array; ``DArray.local_array()`` is
the rank's block as a kiln array, no copy. Every call is collective, as in
MPI; failures raise :class:`DistributedError` with kiln_mpi's message
(which names the ranks and their values where they disagree).
"""

import ctypes
import ctypes.util
import os

import numpy as np

__all__ = ["available", "Communicator", "DArray", "DistributedError"]

_DTYPES = {
    np.dtype(np.int8): 1, np.dtype(np.uint8): 2, np.dtype(np.int16): 3,
    np.dtype(np.uint16): 4, np.dtype(np.int32): 5, np.dtype(np.uint32): 6,
    np.dtype(np.int64): 7, np.dtype(np.uint64): 8, np.dtype(np.float32): 10,
    np.dtype(np.float64): 11, np.dtype(np.complex64): 12,
    np.dtype(np.complex128): 13,
}
_NP = {v: k for k, v in _DTYPES.items()}
_OPS = {"sum": 1, "min": 2, "max": 3}
_TRANSPORTS = {"auto": 0, "staged": 1, "nccl": 2}

_lib = None
_why = None


class DistributedError(RuntimeError):
    """A kiln_mpi call failed; .status is kiln's status name."""

    def __init__(self, call, status, message):
        self.status = status
        super().__init__(f"{call}: {status}: {message}")


class _Opts(ctypes.Structure):  # kiln_mpi_opts
    _fields_ = [("struct_size", ctypes.c_size_t), ("selector", ctypes.c_char_p),
                ("no_fission", ctypes.c_int), ("timeout_ms", ctypes.c_uint64),
                ("transport", ctypes.c_int), ("chunk_bytes", ctypes.c_size_t)]


class _Layout(ctypes.Structure):  # kiln_mpi_layout
    _fields_ = [("struct_size", ctypes.c_size_t), ("rows", ctypes.c_size_t),
                ("cols", ctypes.c_size_t), ("halo", ctypes.c_size_t),
                ("ranks", ctypes.c_int)]


class _ReductionDesc(ctypes.Structure):  # kiln_reduction_desc
    _fields_ = [("struct_size", ctypes.c_size_t), ("arguments", ctypes.c_char_p),
                ("out_type", ctypes.c_char_p), ("out_size", ctypes.c_size_t),
                ("neutral", ctypes.c_char_p), ("reduce", ctypes.c_char_p),
                ("map", ctypes.c_char_p), ("preamble", ctypes.c_char_p),
                ("name", ctypes.c_char_p), ("options", ctypes.c_char_p),
                ("initial", ctypes.c_char_p)]


class _ArgValue(ctypes.Union):  # kiln_arg's value
    _fields_ = [("ptr", ctypes.c_void_p), ("i64", ctypes.c_int64), ("u64", ctypes.c_uint64),
                ("f64", ctypes.c_double), ("raw", ctypes.c_ubyte * 16)]


class _Arg(ctypes.Structure):  # kiln_arg
    _fields_ = [("kind", ctypes.c_int), ("dtype", ctypes.c_int), ("bytes", ctypes.c_size_t),
                ("value", _ArgValue)]


_ARG_SCALAR, _ARG_ARRAY = 2, 4


def _load():
    global _lib, _why
    if _lib is not None or _why is not None:
        return _lib
    # the package's copy first: it links the package's libkiln, so kiln
    # arrays and queues are the same objects on both sides
    own = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libkiln_mpi.so")
    names = [own if os.path.exists(own) else None, os.environ.get("KILN_MPI_LIBRARY"),
             "libkiln_mpi.so.0", ctypes.util.find_library("kiln_mpi")]
    for name in [n for n in names if n]:
        try:
            lib = ctypes.CDLL(name, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError as e:
            _why = f"cannot load {name}: {e}"
    else:
        _why = _why or "libkiln_mpi not found (set KILN_MPI_LIBRARY)"
        return None
    P, S, I, V = ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, None
    sigs = {
        "kiln_mpi_create": (I, [P, P, P]),  # comm's type is set per MPI below
        "kiln_mpi_release": (V, [P]),
        "kiln_mpi_rank": (I, [P]), "kiln_mpi_size": (I, [P]),
        "kiln_mpi_local_rank": (I, [P]), "kiln_mpi_local_size": (I, [P]),
        "kiln_mpi_context": (P, [P]), "kiln_mpi_queue": (P, [P]), "kiln_mpi_device": (P, [P]),
        "kiln_mpi_get_transport": (I, [P]), "kiln_mpi_cuda_aware": (I, [P]),
        "kiln_mpi_direct": (I, [P]),
        "kiln_mpi_last_error_message": (ctypes.c_char_p, []),
        "kiln_mpi_wait": (I, [P, P]),
        "kiln_mpi_allreduce": (I, [P, P, P, I, S, P, P]),
        "kiln_mpi_broadcast": (I, [P, P, P, I, S, P, P]),
        "kiln_mpi_allgather": (I, [P, P, P, P, S, P, P]),
        "kiln_mpi_gather": (I, [P, P, P, P, I, S, P, P]),
        "kiln_mpi_darray_scatter": (I, [P, P, I, S, P, I, S, P, P, P]),
        "kiln_mpi_darray_rows_scatter": (I, [P, P, I, S, S, S, P, I, S, P, P, P]),
        "kiln_mpi_darray_gather": (I, [P, P, P, P, I, S, P, P]),
        "kiln_mpi_darray_create": (I, [P, I, P, P]),
        "kiln_mpi_darray_release": (V, [P]),
        "kiln_mpi_darray_local": (P, [P]), "kiln_mpi_darray_start": (S, [P]),
        "kiln_mpi_darray_count": (S, [P]), "kiln_mpi_darray_size": (S, [P]),
        "kiln_mpi_darray_cols": (S, [P]), "kiln_mpi_darray_halo": (S, [P]),
        "kiln_mpi_darray_ranks": (I, [P]),
        "kiln_mpi_darray_redistribute": (I, [P, P, P, P]),
        "kiln_mpi_darray_sort": (I, [P, P, P]),
        "kiln_mpi_darray_sort_async": (I, [P, P, P, S, P, P]),
        "kiln_mpi_darray_binary": (I, [P, P, I, P, P, P, S, P, P]),
        "kiln_mpi_darray_uniform": (I, [P, P, P, P, S, P, P]),
        "kiln_mpi_darray_normal": (I, [P, P, P, P, ctypes.c_double, ctypes.c_double, S, P, P]),
        "kiln_mpi_darray_cumsum": (I, [P, P, P, P, I, S, P, P]),
        "kiln_mpi_darray_sum": (I, [P, P, P, P, S, P, P]),
        "kiln_mpi_reduction_create": (I, [P, P, P]),
        "kiln_mpi_reduction_release": (V, [P]),
        "kiln_mpi_reduction_allreduce": (I, [P, P, P, S, S, P, P]),
        "kiln_dtype_reduce_result": (I, [I, I]),
        "kiln_mpi_darray_halo_exchange": (I, [P, P, P, S, P, P]),
        "kiln_mpi_darray_histogram": (I, [P, P, P, S, ctypes.c_double, ctypes.c_double, S, P,
                                          P, P]),
        "kiln_array_from_host": (I, [P, I, ctypes.c_uint, P, P, P]),
        "kiln_array_empty": (I, [P, I, ctypes.c_uint, P, P]),
        "kiln_array_read": (I, [P, P, P]),
        "kiln_array_size": (S, [P]),
        "kiln_array_release": (V, [P]),
        "kiln_event_release": (V, [P]),
        "kiln_status_name": (ctypes.c_char_p, [I]),
        "kiln_last_error_message": (ctypes.c_char_p, []),
    }
    try:
        for name, (res, args) in sigs.items():
            f = getattr(lib, name)
            f.restype, f.argtypes = res, args
    except AttributeError as e:
        _why = f"{name} missing from the library: {e}"
        return None
    _lib = lib
    return lib


def _is_kiln_array(a):
    import sys

    k = sys.modules.get("kiln")
    return k is not None and isinstance(a, getattr(k, "Array", ()))


def available():
    """True when libkiln_mpi loads (and mpi4py imports)."""
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        return False
    return _load() is not None


def _check(call, st):
    if st != 0:
        msg = _lib.kiln_mpi_last_error_message().decode() or _lib.kiln_last_error_message().decode()
        raise DistributedError(call, _lib.kiln_status_name(st).decode(), msg)


def _dt(a):
    try:
        return _DTYPES[a.dtype]
    except KeyError:
        raise TypeError(f"kiln.distributed: dtype {a.dtype} is not one kiln_mpi moves") from None


class Communicator:
    """A kiln_mpi over an mpi4py communicator (duplicated inside; collective).

    device: a selector as $KILN_DEVICE (None: $KILN_DEVICE, else kiln's
    default; node-local rank r gets the r-th GPU, or a CPU sub-device);
    transport: "auto", "staged" or "nccl"; timeout_ms: each collective's
    deadline (0: $KILN_MPI_TIMEOUT_MS, else 60 s).
    """

    def __init__(self, comm=None, device=None, transport="auto", timeout_ms=0):
        if _load() is None:
            raise DistributedError("kiln.distributed", "KILN_ERROR_NO_RUNTIME", _why)
        from mpi4py import MPI
        if MPI.Query_thread() < MPI.THREAD_MULTIPLE:
            raise DistributedError(
                "kiln.distributed.Communicator", "KILN_ERROR_UNSUPPORTED",
                "MPI is not at MPI_THREAD_MULTIPLE: set mpi4py.rc.thread_level = 'multiple' "
                "before 'from mpi4py import MPI'")
        self._comm = comm if comm is not None else MPI.COMM_WORLD
        # MPI_Comm is a pointer in Open MPI, an int in MPICH: pass it as it is
        size = MPI._sizeof(MPI.Comm)
        ctype = ctypes.c_void_p if size == ctypes.sizeof(ctypes.c_void_p) else ctypes.c_int
        handle = ctype.from_address(MPI._addressof(self._comm)).value
        _lib.kiln_mpi_create.argtypes = [ctype, ctypes.c_void_p, ctypes.c_void_p]
        self._sel = device.encode() if device else None
        opts = _Opts(ctypes.sizeof(_Opts), self._sel, 0, timeout_ms, _TRANSPORTS[transport], 0)
        self._m = ctypes.c_void_p()
        _check("kiln_mpi_create", _lib.kiln_mpi_create(handle, ctypes.byref(opts),
                                                       ctypes.byref(self._m)))

    # ------------------------------------------------------------ info
    rank = property(lambda self: _lib.kiln_mpi_rank(self._m))
    size = property(lambda self: _lib.kiln_mpi_size(self._m))
    local_rank = property(lambda self: _lib.kiln_mpi_local_rank(self._m))
    local_size = property(lambda self: _lib.kiln_mpi_local_size(self._m))
    cuda_aware = property(lambda self: bool(_lib.kiln_mpi_cuda_aware(self._m)))
    #: all-reduce and broadcast hand MPI the arrays' own memory (host
    #: backend; CUDA with a CUDA-aware MPI) rather than staging them
    direct = property(lambda self: bool(_lib.kiln_mpi_direct(self._m)))

    @property
    def transport(self):
        return {v: k for k, v in _TRANSPORTS.items()}[_lib.kiln_mpi_get_transport(self._m)]

    def close(self):
        """Collective: releases the kiln_mpi (every rank)."""
        if self._m:
            _lib.kiln_mpi_release(self._m)
            self._m = ctypes.c_void_p()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def queue(self):
        """The communicator's queue (kiln_mpi_queue) as a kiln.Queue: make
        the kiln arrays you hand to the collectives on it (or on another
        queue of its context)."""
        if getattr(self, "_queue", None) is None:
            import kiln
            from kiln import _kiln

            self._queue = _kiln.wrap_queue(kiln.Queue, kiln.Context, _lib.kiln_mpi_queue(self._m))
        return self._queue

    # ------------------------------------------------------- helpers
    def _own(self, a, call):
        """a kiln array of the communicator's context, else a clear error"""
        if a.queue.context._int_ptr() != _lib.kiln_mpi_context(self._m):
            raise DistributedError(
                call, "KILN_ERROR_INVALID_ARGUMENT",
                "the kiln array belongs to another context than the communicator's: make it on "
                "comm.queue (kiln.asarray(x, queue=comm.queue)) or pass a NumPy array")
        if a.dtype not in _DTYPES:
            raise TypeError(f"kiln.distributed: dtype {a.dtype} is not one kiln_mpi moves")

    def _coll_kiln(self, call, fn, a, *extra, out_n=None):
        """a collective on a kiln array: on its queue, into a new flat
        kiln array (a contiguous copy for the in-place calls)"""
        import kiln

        self._own(a, call)
        flat = a.copy().reshape(a.size)
        q = ctypes.c_void_p(flat.queue.int_ptr)
        ev = ctypes.c_void_p()
        if out_n is not None:
            out = kiln.empty(out_n, a.dtype, queue=a.queue)
            _check(call, fn(self._m, q, ctypes.c_void_p(flat.int_ptr), ctypes.c_void_p(out.int_ptr),
                            0, None, ctypes.byref(ev)))
        else:
            out = flat
            _check(call, fn(self._m, q, ctypes.c_void_p(flat.int_ptr), *extra, 0, None,
                            ctypes.byref(ev)))
        self._wait(call, ev)
        return out

    def _upload(self, a):
        a = np.ascontiguousarray(a)
        shape = (ctypes.c_size_t * 1)(a.size)
        arr = ctypes.c_void_p()
        _check("kiln_array_from_host", _lib.kiln_array_from_host(
            _lib.kiln_mpi_context(self._m), _dt(a), 1, shape,
            a.ctypes.data_as(ctypes.c_void_p), ctypes.byref(arr)))
        return arr, a

    def wait(self, event):
        """Waits for an event a kiln.distributed call returned (blocking=False)
        and raises DistributedError with the collective's own status and
        message if it failed (kiln_mpi_wait), where event.wait() would say
        only that the event failed."""
        _check("kiln_mpi_wait", _lib.kiln_mpi_wait(self._m, ctypes.c_void_p(event.int_ptr)))

    def _wait(self, call, ev):
        try:
            _check(call, _lib.kiln_mpi_wait(self._m, ev))
        finally:
            _lib.kiln_event_release(ev)

    def _download(self, arr, dtype, n):
        out = np.empty(n, dtype=dtype)
        _check("kiln_array_read", _lib.kiln_array_read(
            _lib.kiln_mpi_queue(self._m), arr, out.ctypes.data_as(ctypes.c_void_p)))
        return out

    def _coll(self, call, fn, a, *extra, out_n=None):
        if _is_kiln_array(a):
            return self._coll_kiln(call, fn, a, *extra, out_n=out_n)
        arr, a = self._upload(np.ravel(a))
        recv = None
        try:
            ev = ctypes.c_void_p()
            if out_n is not None:
                recv = ctypes.c_void_p()
                shape = (ctypes.c_size_t * 1)(out_n)
                _check("kiln_array_empty", _lib.kiln_array_empty(
                    _lib.kiln_mpi_context(self._m), _dt(a), 1, shape, ctypes.byref(recv)))
                _check(call, fn(self._m, None, arr, recv, 0, None, ctypes.byref(ev)))
            else:
                _check(call, fn(self._m, None, arr, *extra, 0, None, ctypes.byref(ev)))
            self._wait(call, ev)
            return self._download(recv if recv is not None else arr, a.dtype,
                                  out_n if out_n is not None else a.size)
        finally:
            _lib.kiln_array_release(arr)
            if recv is not None:
                _lib.kiln_array_release(recv)

    # --------------------------------------------------- collectives
    def allreduce(self, a, op="sum"):
        """op ("sum", "min", "max") over the ranks' arrays (same dtype and
        size everywhere), on every rank: a new 1-D array."""
        return self._coll("kiln_mpi_allreduce", _lib.kiln_mpi_allreduce, a, _OPS[op])

    def broadcast(self, a, root=0):
        """root's array on every rank (the others pass one of the same size and dtype)."""
        return self._coll("kiln_mpi_broadcast", _lib.kiln_mpi_broadcast, a, root)

    def allgather(self, a):
        """The ranks' arrays one after another, in rank order, on every rank."""
        if not _is_kiln_array(a):
            a = np.ravel(a)  # (np.ravel of a kiln array would copy it to the host)
        return self._coll("kiln_mpi_allgather", _lib.kiln_mpi_allgather, a,
                          out_n=a.size * self.size)

    def gather(self, a, root=0):
        """The ranks' arrays (same dtype and size) one after another, in rank
        order, on root: a new 1-D array there (a kiln array for kiln arrays,
        else NumPy); None on the other ranks."""
        import kiln

        call = "kiln_mpi_gather"
        mine = self.rank == root
        ev = ctypes.c_void_p()
        if _is_kiln_array(a):
            self._own(a, call)
            flat = a.copy().reshape(a.size)
            out = kiln.empty(a.size * self.size, a.dtype, queue=a.queue) if mine else None
            _check(call, _lib.kiln_mpi_gather(
                self._m, ctypes.c_void_p(flat.queue.int_ptr), ctypes.c_void_p(flat.int_ptr),
                ctypes.c_void_p(out.int_ptr) if mine else None, root, 0, None, ctypes.byref(ev)))
            self._wait(call, ev)
            return out
        arr, h = self._upload(np.ravel(a))
        recv = ctypes.c_void_p()
        try:
            if mine:
                shape = (ctypes.c_size_t * 1)(h.size * self.size)
                _check("kiln_array_empty", _lib.kiln_array_empty(
                    _lib.kiln_mpi_context(self._m), _dt(h), 1, shape, ctypes.byref(recv)))
            _check(call, _lib.kiln_mpi_gather(self._m, None, arr, recv if mine else None, root,
                                              0, None, ctypes.byref(ev)))
            self._wait(call, ev)
            return self._download(recv, h.dtype, h.size * self.size) if mine else None
        finally:
            _lib.kiln_array_release(arr)
            if recv:
                _lib.kiln_array_release(recv)

    def reduction(self, arguments, out_type, neutral, reduce, map, preamble=None, out_size=0,
                  name=None, options=None):
        """A user-defined reduction across the ranks (kiln_mpi_reduction_create:
        the strings of kiln.ReductionKernel's C form, without initial).
        Compiles; not collective. Call the result with (n, *args) on every
        rank: each rank reduces its own [0, n) (n may differ), and every
        rank gets the combined result, a NumPy scalar for a scalar out_type
        (int, long, float, double, ...), else out_size bytes."""
        return Reduction(self, arguments, out_type, neutral, reduce, map, preamble, out_size,
                         name, options)

    # --------------------------------------------- distributed arrays
    def scatter(self, data, root=0, dtype=None, shape=None, halo=0):
        """A DArray from root's NumPy data (1-D: blocks; 2-D: row blocks with
        halo rows). Other ranks pass None with dtype and shape."""
        if self.rank == root:
            data = np.ascontiguousarray(data)
            dtype, shape = data.dtype, data.shape
        dtype = np.dtype(dtype)
        shape = tuple(shape)
        ev, d = ctypes.c_void_p(), ctypes.c_void_p()
        host = data.ctypes.data_as(ctypes.c_void_p) if self.rank == root else None
        code = _DTYPES.get(dtype)
        if code is None:
            raise TypeError(f"kiln.distributed: dtype {dtype} is not one kiln_mpi moves")
        if len(shape) == 1:
            _check("kiln_mpi_darray_scatter", _lib.kiln_mpi_darray_scatter(
                self._m, None, code, shape[0], host, root, 0, None, ctypes.byref(ev),
                ctypes.byref(d)))
        elif len(shape) == 2:
            _check("kiln_mpi_darray_rows_scatter", _lib.kiln_mpi_darray_rows_scatter(
                self._m, None, code, shape[0], shape[1], halo, host, root, 0, None,
                ctypes.byref(ev), ctypes.byref(d)))
        else:
            raise ValueError(f"kiln.distributed.scatter: {len(shape)}-D data (1-D or 2-D)")
        self._wait("kiln_mpi_darray_scatter", ev)
        return DArray(self, d, dtype, shape)

    def random(self, generator, n, dtype=np.float64, dist="uniform", mean=0.0, stddev=1.0):
        """A 1-D DArray of n random numbers from a kiln.random.Generator:
        bit for bit the generator's one-device fill of n elements (each
        rank draws its own elements' words: the counters are global
        indices). The generator must be in the same state on every rank
        (same seed, same offset); afterwards its offset has moved past all
        n elements on every rank. dist: "uniform" ([0, 1)) or "normal"."""
        if dist not in ("uniform", "normal"):
            raise ValueError(f"kiln.distributed.random: dist must be 'uniform' or 'normal', not {dist!r}")
        d = self.empty(dtype, (int(n),))
        rng = ctypes.c_void_p(generator._rng.int_ptr)
        ev = ctypes.c_void_p()
        if dist == "uniform":
            call = "kiln_mpi_darray_uniform"
            st = _lib.kiln_mpi_darray_uniform(self._m, None, rng, d._d, 0, None, ctypes.byref(ev))
        else:
            call = "kiln_mpi_darray_normal"
            st = _lib.kiln_mpi_darray_normal(self._m, None, rng, d._d, float(mean), float(stddev), 0,
                                             None, ctypes.byref(ev))
        _check(call, st)
        self._wait(call, ev)
        return d

    def empty(self, dtype, shape, halo=0, ranks=0):
        """An uninitialised DArray: shape (n,) in 1-D blocks or (rows, cols) in
        row blocks, on ranks [0, ranks) (0: every rank)."""
        shape = tuple(shape)
        lay = _Layout(ctypes.sizeof(_Layout), shape[0], shape[1] if len(shape) == 2 else 0,
                      halo, ranks)
        d = ctypes.c_void_p()
        _check("kiln_mpi_darray_create", _lib.kiln_mpi_darray_create(
            self._m, _DTYPES[np.dtype(dtype)], ctypes.byref(lay), ctypes.byref(d)))
        return DArray(self, d, np.dtype(dtype), shape)


_SCALAR_OUT = {"char": np.int8, "uchar": np.uint8, "short": np.int16, "ushort": np.uint16,
               "int": np.int32, "uint": np.uint32, "long": np.int64, "ulong": np.uint64,
               "float": np.float32, "double": np.float64}


class Reduction:
    """A kiln_mpi_reduction (Communicator.reduction)."""

    def __init__(self, comm, arguments, out_type, neutral, reduce, map, preamble, out_size, name,
                 options):
        def b(x):
            return x.encode() if isinstance(x, str) else x

        self._c, self._r = comm, None
        self._out = _SCALAR_OUT.get(out_type)
        if self._out is None and not out_size:
            raise ValueError(f"kiln.distributed.reduction: out_type {out_type!r} is not a scalar "
                             "type name: give its out_size")
        self._size = np.dtype(self._out).itemsize if self._out is not None else out_size
        d = _ReductionDesc(ctypes.sizeof(_ReductionDesc), b(arguments), b(out_type), out_size,
                           b(neutral), b(reduce), b(map), b(preamble), b(name), b(options), None)
        r = ctypes.c_void_p()
        _check("kiln_mpi_reduction_create", _lib.kiln_mpi_reduction_create(
            comm._m, ctypes.byref(d), ctypes.byref(r)))
        self._r = r

    def __del__(self):
        if getattr(self, "_r", None) and _lib is not None:
            _lib.kiln_mpi_reduction_release(self._r)
            self._r = None

    def __call__(self, n, *args):
        """The reduction over every rank's [0, n) with its args (kiln arrays
        of the communicator's queue, NumPy arrays (copied there), or Python
        / NumPy scalars), on every rank. Collective: every rank calls it."""
        import kiln

        argv = (_Arg * max(len(args), 1))()
        keep = []
        for i, a in enumerate(args):
            if isinstance(a, np.ndarray):
                a = kiln.asarray(a, queue=self._c.queue)
            if _is_kiln_array(a):
                self._c._own(a, "kiln_mpi_reduction_allreduce")
                if not a._contiguous:  # the kernel indexes x[i]: a dense copy
                    a = a.copy()
                keep.append(a)
                argv[i].kind, argv[i].value.ptr = _ARG_ARRAY, a.int_ptr
            else:
                v = np.asarray(a)
                if v.dtype == np.bool_ or v.dtype.kind not in "iuf":
                    raise TypeError(f"kiln.distributed.reduction: argument {i}: {type(a)}")
                v = v.astype(np.int64 if v.dtype.kind in "iu" else np.float64)
                argv[i].kind, argv[i].dtype = _ARG_SCALAR, _DTYPES[v.dtype]
                if v.dtype.kind == "f":
                    argv[i].value.f64 = float(v)
                else:
                    argv[i].value.i64 = int(v)
        out = (ctypes.c_ubyte * self._size)()
        _check("kiln_mpi_reduction_allreduce", _lib.kiln_mpi_reduction_allreduce(
            self._c._m, None, self._r, n, len(args), argv if args else None, out))
        raw = bytes(out)
        return np.frombuffer(raw, dtype=self._out)[0] if self._out is not None else raw


class DArray:
    """A kiln_mpi_darray: this rank's block on its device."""

    def __init__(self, comm, handle, dtype, shape):
        self._c, self._d, self.dtype, self.shape = comm, handle, dtype, tuple(shape)

    def __del__(self):
        if getattr(self, "_d", None) and _lib is not None:
            _lib.kiln_mpi_darray_release(self._d)
            self._d = None

    start = property(lambda self: _lib.kiln_mpi_darray_start(self._d))
    count = property(lambda self: _lib.kiln_mpi_darray_count(self._d))
    ranks = property(lambda self: _lib.kiln_mpi_darray_ranks(self._d))

    def local(self):
        """This rank's block, halo rows included, as a NumPy array (a copy)."""
        arr = _lib.kiln_mpi_darray_local(self._d)
        return self._c._download(arr, self.dtype, _lib.kiln_array_size(arr))

    def _binary(self, op, other):
        if not isinstance(other, DArray):
            return NotImplemented
        from kiln import _kiln

        dtype = np.result_type(self.dtype, other.dtype)
        out = self._c.empty(dtype, self.shape)
        ev = ctypes.c_void_p()
        _check("kiln_mpi_darray_binary", _lib.kiln_mpi_darray_binary(
            self._c._m, None, _kiln.BINARY_OPS[op], out._d, self._d, other._d, 0, None,
            ctypes.byref(ev)))
        self._c._wait("kiln_mpi_darray_binary", ev)
        return out

    def __add__(self, other):
        """Elementwise on each rank's block (no communication): 1-D DArrays
        of one layout; the result in NumPy's promoted dtype."""
        return self._binary("add", other)

    def __sub__(self, other):
        return self._binary("subtract", other)

    def __mul__(self, other):
        return self._binary("multiply", other)

    def __truediv__(self, other):
        if isinstance(other, DArray) and (self.dtype.kind != "f" or other.dtype.kind != "f"):
            raise TypeError("kiln.distributed: / takes float DArrays (kiln_mpi divides integers "
                            "as C does, not as NumPy's true division)")
        return self._binary("true_divide", other)

    def local_array(self):
        """This rank's block, halo rows included, as a kiln array on the
        communicator's queue: the block itself, no copy (writes to it are
        the DArray's)."""
        from kiln import _kiln

        arr = _lib.kiln_mpi_darray_local(self._d)
        return _kiln.wrap_array(arr, self._c.queue)

    def gather(self, root=0):
        """The whole array (owned rows) on root as a NumPy array of the
        DArray's shape; None elsewhere."""
        out = np.empty(self.shape, dtype=self.dtype) if self._c.rank == root else None
        ev = ctypes.c_void_p()
        host = out.ctypes.data_as(ctypes.c_void_p) if out is not None else None
        _check("kiln_mpi_darray_gather", _lib.kiln_mpi_darray_gather(
            self._c._m, None, self._d, host, root, 0, None, ctypes.byref(ev)))
        self._c._wait("kiln_mpi_darray_gather", ev)
        return out

    def sort(self, blocking=True):
        """The global sort in place (kiln's total order; a sample sort).
        blocking=False returns at once with a kiln.Event (the sort runs on
        kiln_mpi's job thread; later work on comm.queue waits for it;
        comm.wait(event) raises its failure)."""
        if blocking:
            _check("kiln_mpi_darray_sort", _lib.kiln_mpi_darray_sort(self._c._m, None, self._d))
            return self
        import kiln
        from kiln import _kiln

        ev = ctypes.c_void_p()
        _check("kiln_mpi_darray_sort", _lib.kiln_mpi_darray_sort_async(
            self._c._m, None, self._d, 0, None, ctypes.byref(ev)))
        try:
            return _kiln.wrap_event(kiln.Event, ev.value)
        finally:
            _lib.kiln_event_release(ev)

    def cumsum(self, exclusive=False):
        """The global prefix sum in place."""
        ev = ctypes.c_void_p()
        _check("kiln_mpi_darray_cumsum", _lib.kiln_mpi_darray_cumsum(
            self._c._m, None, self._d, self._d, int(exclusive), 0, None, ctypes.byref(ev)))
        self._c._wait("kiln_mpi_darray_cumsum", ev)
        return self

    def sum(self):
        """The sum of every element (1-D DArrays), on every rank, as a NumPy
        scalar of kiln's sum dtype for the DArray's (kiln_dtype_reduce_result):
        a local sum, then an all-reduce."""
        one = (ctypes.c_size_t * 1)(1)
        res, ev = ctypes.c_void_p(), ctypes.c_void_p()
        code = _lib.kiln_dtype_reduce_result(1, _DTYPES[self.dtype])  # KILN_REDUCE_SUM
        rdt = {c: d for d, c in _DTYPES.items()}[code]
        _check("kiln_array_empty", _lib.kiln_array_empty(
            _lib.kiln_mpi_context(self._c._m), code, 1, one, ctypes.byref(res)))
        try:
            _check("kiln_mpi_darray_sum", _lib.kiln_mpi_darray_sum(
                self._c._m, None, self._d, res, 0, None, ctypes.byref(ev)))
            self._c._wait("kiln_mpi_darray_sum", ev)
            return self._c._download(res, rdt, 1)[0]
        finally:
            _lib.kiln_array_release(res)

    def histogram(self, bins, lo, hi):
        """The global histogram (int64 counts) on every rank."""
        ev, h = ctypes.c_void_p(), ctypes.c_void_p()
        _check("kiln_mpi_darray_histogram", _lib.kiln_mpi_darray_histogram(
            self._c._m, None, self._d, bins, lo, hi, 0, None, ctypes.byref(ev), ctypes.byref(h)))
        try:
            self._c._wait("kiln_mpi_darray_histogram", ev)
            return self._c._download(h, np.dtype(np.int64), bins)
        finally:
            _lib.kiln_array_release(h)

    def halo_exchange(self):
        """Row blocks: fills the halo rows from the neighbouring ranks."""
        ev = ctypes.c_void_p()
        _check("kiln_mpi_darray_halo_exchange", _lib.kiln_mpi_darray_halo_exchange(
            self._c._m, None, self._d, 0, None, ctypes.byref(ev)))
        self._c._wait("kiln_mpi_darray_halo_exchange", ev)
        return self

    def redistribute(self, shape=None, halo=0, ranks=0):
        """A new DArray of the same elements (C order) in another layout:
        shape (n,) or (rows, cols), halo rows, on ranks [0, ranks)."""
        n = _lib.kiln_mpi_darray_size(self._d) * _lib.kiln_mpi_darray_cols(self._d)
        out = self._c.empty(self.dtype, shape or (n,), halo=halo, ranks=ranks)
        _check("kiln_mpi_darray_redistribute", _lib.kiln_mpi_darray_redistribute(
            self._c._m, None, self._d, out._d))
        return out
