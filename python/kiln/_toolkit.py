"""kiln's device hash table and list builder (kiln/toolkit.h) from Python:
kiln.HashTable and kiln.ListBuilder."""
import numpy as np

from . import _kiln as _k
from ._array import Array, asarray, empty, full
from ._core import get_default_queue
from ._dtypes import C_NAME, code_of

_KEY_DTYPES = (np.dtype(np.int32), np.dtype(np.uint32))
_VALUE_DTYPES = (np.dtype(np.int32), np.dtype(np.uint32), np.dtype(np.float32))


class HashTable(_k.HashTableBase):
    """A device hash table from 32-bit integer keys to 32-bit values
    (kiln_hash_table_*): ``HashTable(capacity, key_dtype=int32,
    value_dtype=int32, queue=None)``. key_dtype int32 or uint32,
    value_dtype int32, uint32 or float32. Open addressing in 2 * capacity
    slots; at most ``capacity`` keys over the table's life, erased ones
    included, until clear(): an insert past that raises
    kiln.OutOfRangeError ("full") and leaves those keys out. The keys -1
    and -2 (0xFFFFFFFF, 0xFFFFFFFE) are reserved: inserting them raises
    kiln.InvalidArgumentError and stores none of the call's keys.

    Keys and values are anything kiln.asarray takes (NumPy arrays, lists,
    kiln Arrays of any shape, flattened in C order), cast to the table's
    dtypes as ``astype`` does. Every call runs on the table's queue, in its
    order; insert, add, count and clear block, lookup and erase return at
    once (their results are ordered on the queue)."""

    __slots__ = ("capacity", "key_dtype", "value_dtype")

    def __new__(cls, capacity, key_dtype=np.int32, value_dtype=np.int32, queue=None):
        kd, vd = np.dtype(key_dtype), np.dtype(value_dtype)
        if kd not in _KEY_DTYPES:
            raise TypeError(f"HashTable: key_dtype must be int32 or uint32, not {kd}")
        if vd not in _VALUE_DTYPES:
            raise TypeError(f"HashTable: value_dtype must be int32, uint32 or float32, not {vd}")
        capacity = int(capacity)
        if capacity < 1:
            raise ValueError("HashTable: capacity must be >= 1")
        q = queue if queue is not None else get_default_queue()
        self = super().__new__(cls, q, capacity, code_of(kd), code_of(vd))
        self.capacity, self.key_dtype, self.value_dtype = capacity, kd, vd
        return self

    def _flat(self, x, dtype, what):
        a = x if isinstance(x, Array) else asarray(np.asarray(x), queue=self.queue)
        if a.dtype != dtype:
            if a.dtype.kind not in "biu" + ("f" if dtype.kind == "f" else ""):
                raise TypeError(f"HashTable: {what} of dtype {a.dtype} for a table of {dtype}")
            a = a.astype(dtype)
        if not a._contiguous:
            a = a.copy()
        return a.reshape(-1) if a.ndim != 1 else a

    def _values(self, values, n):
        if np.ndim(values) == 0 and not isinstance(values, Array):
            return full(n, values, self.value_dtype, self.queue)
        v = self._flat(values, self.value_dtype, "values")
        if v.size != n:
            raise ValueError(f"HashTable: {n} keys but {v.size} values")
        return v

    def insert(self, keys, values, blocking=True):
        """keys[k] -> values[k] (a scalar value: for every key); an
        existing key's value is replaced. Blocks, to report a full table as
        OutOfRangeError; blocking=False returns at once with an Event that
        fails (its wait raises) when the table filled up or a key was
        reserved."""
        k = self._flat(keys, self.key_dtype, "keys")
        return super().insert(k, self._values(values, k.size), False, bool(blocking))

    def add(self, keys, values=None, blocking=True):
        """Insert-or-add: values[k] (None: 1) added atomically to keys[k]'s
        value, a new key starting from 0; repeated keys all count. Blocks;
        blocking=False: an Event, as insert's."""
        k = self._flat(keys, self.key_dtype, "keys")
        return super().insert(k, None if values is None else self._values(values, k.size), True,
                              bool(blocking))

    def lookup(self, keys, missing=0, return_found=False):
        """The values of keys (keys' shape; ``missing`` where a key is
        absent), and with return_found=True also a bool array: found."""
        shape = keys.shape if isinstance(keys, Array) else np.shape(keys)
        k = self._flat(keys, self.key_dtype, "keys")
        v = empty(k.size, self.value_dtype, self.queue)
        f = empty(k.size, np.uint8, self.queue) if return_found else None
        super().lookup(k, v, np.array(missing).astype(self.value_dtype).tobytes(), f)
        if shape != (k.size,):
            v = v.reshape(shape)
        if not return_found:
            return v
        f = f.astype(bool)
        return v, (f.reshape(shape) if shape != (k.size,) else f)

    def contains(self, keys):
        """A bool array: whether each key is in the table."""
        return self.lookup(keys, return_found=True)[1]

    def erase(self, keys):
        """Erases keys (absent ones are ignored); their slots stay used
        towards the capacity until clear()."""
        super().erase(self._flat(keys, self.key_dtype, "keys"))

    def clear(self):
        """Empties the table (Blocks)."""
        super().clear()

    def __len__(self):
        """The number of keys now (Blocks)."""
        return self.count()

    def __repr__(self):
        return (f"<kiln.HashTable capacity={self.capacity} {self.key_dtype}->{self.value_dtype}>")


class ListBuilder:
    """kiln's list builder (kiln_allocate_*, like PyOpenCL's
    ListOfListsBuilder): ``ListBuilder(context, arguments, item_dtype,
    operation, preamble="", name=None)``; ``lb(n, *args, queue=None) ->
    (items, offsets)``. operation is C statements of the index i that call
    ``KILN_EMIT(value)`` zero or more times; it runs twice (a count, then a
    fill), so it must emit the same values both times. items: one flat
    array of item_dtype of every emitted value (item 0's first); offsets:
    int64, n + 1: item i's values are items[offsets[i]:offsets[i+1]].
    arguments as for ElementwiseKernel (at least one array; arrays are
    indexed freely and must be contiguous). Blocks (the total sizes the
    output); with ``capacity=k`` it does not (kiln_allocate_run_async)
    and returns ``(items, offsets, check)``: items has k elements, values
    past k are not stored while ``offsets[n]`` is still the whole total;
    check (int64, one element) is 0, or i + 1 for an item i whose two
    passes emitted different numbers of values."""

    def __init__(self, context, arguments, item_dtype, operation, preamble="", name=None):
        from ._kernels import _default_context, _hints, _parse_arguments

        self.context = _default_context(context)
        self.item_dtype = np.dtype(item_dtype)
        t = C_NAME.get(self.item_dtype)
        if t is None or self.item_dtype.kind == "c":
            raise TypeError(f"ListBuilder: unsupported item_dtype {self.item_dtype}")
        self._hints = _hints(_parse_arguments(arguments))
        self._gen = _k.allocate_create(self.context, arguments, t, operation, preamble or None,
                                       name)

    def __call__(self, n, *args, queue=None, capacity=None):
        n = int(n)
        if n < 0:
            raise ValueError("ListBuilder: n must be >= 0")
        if queue is None:
            queue = next((a.queue for a in args if isinstance(a, Array)), None) or \
                get_default_queue()
        if capacity is None:
            return self._gen.run(queue, n, args, self._hints)
        capacity = int(capacity)
        if capacity < 0:
            raise ValueError(f"ListBuilder: capacity must be >= 0, not {capacity}")
        return self._gen.run(queue, n, args, self._hints, capacity)

    def lists(self, n, *args, queue=None):
        """The same as a Python list of n NumPy arrays (one read of each)."""
        items, offsets = self(n, *args, queue=queue)
        it, off = items.get(), offsets.get()
        return [it[off[i]:off[i + 1]] for i in range(n)]
