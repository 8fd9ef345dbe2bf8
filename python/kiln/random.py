"""kiln.random: counter-based generators (Philox4x32-10, Threefry) on the
device, NumPy's Generator names: ``kiln.random.default_rng(seed)``,
``g.random(size)``, ``g.uniform``, ``g.normal``, ``g.integers``; and the
legacy module functions rand, randn, seed."""
import numpy as np

from . import _kiln as _k
from ._array import _queue, empty

ALGORITHMS = {"philox": 0, "philox4x32_10": 0, "threefry": 1, "threefry4x32_20": 1,
              "threefry2x64_20": 2}


def _shape(size):
    if size is None:
        return ()
    if isinstance(size, (int, np.integer)):
        return (int(size),)
    return tuple(size)


class Generator:
    """A stream of random numbers (kiln_rng). Same seed, substream and
    algorithm give the same numbers on every device."""

    def __init__(self, seed=None, algorithm="philox", substream=0, queue=None):
        if seed is None:
            seed = int(np.random.SeedSequence().entropy % (1 << 64))
        if algorithm not in ALGORITHMS:
            raise ValueError(f"unknown algorithm {algorithm!r}; kiln has {sorted(ALGORITHMS)}")
        self.seed = int(seed)
        self.algorithm = algorithm
        self._rng = _k.RngBase(ALGORITHMS[algorithm], self.seed & ((1 << 64) - 1), int(substream), 0)
        self._queue = queue

    def _out(self, size, dtype, queue):
        return empty(_shape(size), dtype, _queue(queue or self._queue))

    def random(self, size=None, dtype=np.float64, queue=None):
        """Uniform in [0, 1)."""
        a = self._out(size, dtype, queue)
        self._rng.fill(0, a)
        return a

    def uniform(self, low=0.0, high=1.0, size=None, dtype=np.float64, queue=None):
        a = self.random(size, dtype, queue)
        if low != 0.0 or high != 1.0:
            a = a * float(high - low) + float(low)
        return a

    def normal(self, loc=0.0, scale=1.0, size=None, dtype=np.float64, queue=None):
        a = self._out(size, dtype, queue)
        self._rng.fill(1, a, float(loc), float(scale))
        return a

    def standard_normal(self, size=None, dtype=np.float64, queue=None):
        return self.normal(0.0, 1.0, size, dtype, queue)

    def integers(self, low, high=None, size=None, dtype=np.int64, queue=None):
        if high is None:
            low, high = 0, low
        a = self._out(size, dtype, queue)
        self._rng.fill(2, a, int(low), int(high))
        return a

    @property
    def offset(self):
        return self._rng.offset

    @offset.setter
    def offset(self, value):
        self._rng.offset = value


_global = {"g": None}


def default_rng(seed=None, algorithm="philox"):
    return Generator(seed, algorithm)


def seed(s):
    _global["g"] = Generator(s)


def _g():
    if _global["g"] is None:
        _global["g"] = Generator()
    return _global["g"]


def rand(*shape):
    return _g().random(shape)


def randn(*shape):
    return _g().standard_normal(shape)


def random(size=None):
    return _g().random(size)


def uniform(low=0.0, high=1.0, size=None):
    return _g().uniform(low, high, size)


def normal(loc=0.0, scale=1.0, size=None):
    return _g().normal(loc, scale, size)


def randint(low, high=None, size=None, dtype=np.int64):
    return _g().integers(low, high, size, dtype)
