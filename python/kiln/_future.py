"""kiln's own futures (kiln.h, "Futures"; docs/api.md) from Python:
kiln.Future, kiln.read_future, kiln.future_ready, kiln.when_all,
kiln.when_any. A thin layer over kiln_future_*: values travel as bytes
and are decoded here (a NumPy array of the dtype and shape they were made
with)."""
import numpy as np

from . import _kiln as _k
from ._core import get_default_queue
from ._errors import KilnError

def _decode_array(dtype, shape):
    def decode(b):
        return np.frombuffer(b or b"", dtype=dtype).reshape(shape).copy()

    decode.empty = True  # a 0-byte value: kiln has no value (NULL), still an array
    return decode


def _decoded(decode, b):
    decode = decode or _decode_none
    if b is None and not getattr(decode, "empty", False):
        return None
    return decode(b)


def _decode_none(b):
    return None


def _decode_index(b):
    return int(np.frombuffer(b, dtype=np.uintp)[0])


class Future:
    """A value the host will have (kiln_future): ``result()`` waits and
    returns it (a NumPy array for array futures, None for when_all, an
    int for when_any); ``then(fn)`` chains a step that kiln runs on its
    callback thread (with the GIL) once this future completes, without
    blocking the caller: fn(value) returns None, a kiln.Future (the step
    settles when that one does: host -> device -> host without blocking),
    or a host value (a NumPy array, a scalar or bytes). A failure travels
    down the chain: steps after it never run, and result() at the end
    raises the first failure (an exception fn raised, re-raised as itself).
    ``cancel()`` stops a step or join not started (KILN_ERROR_CANCELED);
    futures of device work cannot be canceled (WrongStateError).
    ``event()`` is a kiln.Event that settles with the future (pass it in
    wait_for=)."""

    __slots__ = ("_base", "_box", "_boxes")

    def __init__(self, base, decode, boxes=()):
        self._base = base
        # the box: how to decode the value (a step's is known once it ran)
        # and an exception a step raised
        self._box = {"decode": decode}
        self._boxes = tuple(boxes) + (self._box,)

    def _first_exc(self):
        for box in self._boxes:
            exc = box.get("exc")
            if exc is None and box.get("inner") is not None:
                exc = box["inner"]._first_exc()
            if exc is not None:
                return exc
        return None

    def _raise_first(self, err):
        exc = self._first_exc()
        if exc is not None:
            raise exc from err
        raise err

    def wait(self):
        """Blocks until settled; raises its failure."""
        try:
            self._base.wait()
        except KilnError as e:
            self._raise_first(e)

    def result(self):
        """Waits and returns the value (decoded)."""
        try:
            b = self._base.value()
        except KilnError as e:
            self._raise_first(e)
        return _decoded(self._box.get("decode"), b)

    def done(self):
        return self._base.state in (0, -1)

    @property
    def state(self):
        """0 complete, -1 failed, else pending (kiln_event_state)."""
        return self._base.state

    def event(self):
        return self._base.event()

    def cancel(self):
        self._base.cancel()

    def then(self, fn):
        """A step after this future (kiln_future_then): fn(value) runs on
        kiln's callback thread; the returned Future settles with its
        outcome."""
        if not callable(fn):
            raise TypeError("then: expected a callable")
        decode_in = self._box
        box = {}

        def step(b):
            try:
                v = _decoded(decode_in.get("decode"), b)
                r = fn(v)
                if r is None:
                    box["decode"] = _decode_none
                    return None
                if isinstance(r, Future):
                    box["decode"] = r._box.get("decode")
                    box["inner"] = r  # its exception box too
                    return r._base
                if isinstance(r, (bytes, bytearray)):
                    box["decode"] = bytes
                    return bytes(r)
                a = np.asarray(r)  # 0-d stays 0-d (tobytes gives C order)
                if a.dtype.kind not in "biufc":
                    raise TypeError("a step returns None, a kiln.Future, bytes or numbers, "
                                    f"not {type(r).__name__}")
                box["decode"] = _decode_array(a.dtype, a.shape)
                return a.tobytes()
            except BaseException as e:  # kept for result(), never lost
                box["exc"] = e
                return 0  # not a result: the C step fails (INVALID_ARGUMENT)

        nxt = Future(self._base.then(step), None, self._boxes)
        nxt._box = box  # the step fills it when it runs
        nxt._boxes = self._boxes + (box,)
        return nxt

    def __repr__(self):
        s = {0: "complete", -1: "failed"}.get(self.state, "pending")
        return f"<kiln.Future {s}>"


def read_future(a):
    """A Future of array a's data (kiln_array_read_future): result() is a
    NumPy array of a's dtype and shape; the read runs after the queue's
    earlier work and nothing blocks until result()."""
    from ._array import Array, _np_dtype

    if not isinstance(a, Array):
        raise TypeError("read_future: expected a kiln Array")
    return Future(_k.array_read_future(a), _decode_array(_np_dtype(a), a.shape))


def future_ready(value, context=None):
    """A Future already complete with a host value (kiln_future_ready)."""
    ctx = context if context is not None else get_default_queue().context
    if isinstance(value, (bytes, bytearray)):
        return Future(_k.future_ready(ctx, bytes(value)), bytes)
    a = np.asarray(value)
    return Future(_k.future_ready(ctx, a.tobytes()), _decode_array(a.dtype, a.shape))


def _join(futures, any_):
    fs = list(futures)
    if not fs or not all(isinstance(f, Future) for f in fs):
        raise TypeError("when_all/when_any: expected a non-empty sequence of kiln Futures")
    base = (_k.when_any if any_ else _k.when_all)([f._base for f in fs])
    boxes = tuple(b for f in fs for b in f._boxes)
    return Future(base, _decode_index if any_ else _decode_none, boxes)


def when_all(futures):
    """Completes when all have completed (result None); fails at the first
    failure (kiln_future_when_all)."""
    return _join(futures, False)


def when_any(futures):
    """Completes when the first completes; result: its index. Fails only
    when all have failed (kiln_future_when_any)."""
    return _join(futures, True)

