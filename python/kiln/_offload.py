"""Offload regions from Python: a loop body (C statements in kiln's portable
dialect) run on the device over host (NumPy) memory with explicit maps, as
OpenMP's ``target ... map(to/from/tofrom/alloc)`` (kiln/offload.h), and data
regions as ``with`` blocks that keep data on the device between offloads.

    dist = kiln.Offload(None, "const double *X, double *D, int M, int N", body, dims=2,
                        index_names="i,j")
    dist((M, M), kiln.to(X), kiln.from_(D), M, N)            # maps for one run
    with kiln.data(to=[X], alloc=[D]) as region:             # maps for a block
        dist((M, M), kiln.present(X), kiln.from_(D), M, N, region=region)
"""
from . import _kiln as _k
from ._core import get_default_queue
from ._kernels import _default_context, _hints, _opts, _parse_params


class Map:
    """Host memory (anything with the buffer protocol, C-contiguous) and
    how it moves: kiln.to / from_ / tofrom / alloc / present."""

    __slots__ = ("_kiln_map_obj", "_kiln_map_kind")

    def __init__(self, obj, kind):
        self._kiln_map_obj = obj
        self._kiln_map_kind = kind


def present(x):
    return Map(x, 0)


def to(x):
    return Map(x, 1)


def from_(x):
    return Map(x, 2)


def tofrom(x):
    return Map(x, 3)


def alloc(x):
    return Map(x, 4)


class Offload:
    """kiln_offload_create(context, params, body, dims, opts); call it as
    ``off(range, *args, queue=None, region=None)`` (Blocks until done)."""

    def __init__(self, context, params, body, dims=1, index_names=None, preamble=None, name=None,
                 options=None):
        self.context = _default_context(context)
        self._hints = _hints(_parse_params(params))
        self._off = _k.offload_create(self.context, params, body, int(dims), index_names, preamble,
                                      name, _opts(options))

    def __call__(self, range, *args, queue=None, region=None):
        q = queue or (region.queue if region is not None else get_default_queue())
        base = region._base if region is not None else None  # read once: another thread may end it
        if region is not None and base is None:
            raise ValueError("offload: the data region has ended (use it inside its with block)")
        _k.offload_run(self._off, q, base, range, args, self._hints)


class data:
    """A data region: ``with kiln.data(to=[...], from_=[...], tofrom=[...],
    alloc=[...], queue=None, parent=None) as region:``; FROM/TOFROM maps are
    copied back at the end of the block. Using the region after the block
    raises ValueError."""

    def __init__(self, to=(), from_=(), tofrom=(), alloc=(), queue=None, parent=None):
        self.queue = queue or (parent.queue if parent is not None else get_default_queue())
        self._maps = tuple([Map(x, 1) for x in to] + [Map(x, 2) for x in from_] +
                           [Map(x, 3) for x in tofrom] + [Map(x, 4) for x in alloc])
        self._parent = parent
        self._base = None

    def __enter__(self):
        self._base = _k.region_begin(self.queue, self._parent._base if self._parent else None,
                                     self._maps)
        return self

    def __exit__(self, *exc):
        base, self._base = self._base, None
        base.end()
        return False
