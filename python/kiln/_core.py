"""Devices, contexts, queues and events."""
import atexit
import threading

from . import _kiln as _k


_DEVICE_CACHE = {}


def _device_from_base(base):
    # Device objects are plain pointers: find the index with the same pointer.
    key = hash(base)
    dev = _DEVICE_CACHE.get(key)
    if dev is None:
        for i in range(_k.device_count()):
            cand = _k.device_get(i)
            if cand == base:
                dev = Device(cand)
                break
        else:
            dev = Device(base)
        _DEVICE_CACHE[key] = dev
    return dev


class Device:
    """A kiln device (owned by kiln, never released). ``info()`` gives its
    kiln_device_info as a dict; the common fields are attributes."""

    __slots__ = ("_base",)

    def __init__(self, base):
        self._base = base

    def info(self):
        return self._base.info()

    name = property(lambda self: self.info()["name"])
    id = property(lambda self: self.info()["id"])
    type = property(lambda self: self.info()["type"])
    backend = property(lambda self: self.info()["backend"])

    def __eq__(self, other):
        return isinstance(other, Device) and self._base == other._base

    def __hash__(self):
        return hash(self._base)

    def __repr__(self):
        i = self.info()
        return f"<kiln.Device {i['id']} {i['name']!r} ({i['type']}, {i['backend']})>"



def devices():
    """Every device kiln sees, in kiln_device_at order."""
    return [_device_from_base(_k.device_get(i)) for i in range(_k.device_count())]


def get_device(selector=None):
    """The device a selector names ("cuda:0", "pocl", "gpu", "2"); None or ""
    uses $KILN_DEVICE, then kiln's default preference."""
    return _device_from_base(_k.device_select(selector))


class Context(_k.ContextBase):
    """A context over one or several devices of one backend."""

    __slots__ = ()

    def __new__(cls, devices=None):
        if devices is None:
            devices = [get_device()]
        elif isinstance(devices, (Device, str)):
            devices = [devices]
        bases = [(get_device(d) if isinstance(d, str) else d)._base for d in devices]
        return super().__new__(cls, bases)

    @property
    def devices(self):
        return [_device_from_base(d) for d in _k.ContextBase.devices(self)]

    def __repr__(self):
        return f"<kiln.Context on {', '.join(d.id for d in self.devices)}>"


class Event(_k.EventBase):
    """A kiln event: ``wait(timeout=None)``, ``state``, ``times``;
    ``add_done_callback(fn)`` (fn(event) on kiln's callback thread, with the
    GIL), ``then(fn)`` (fn(state) there, and a new Event that completes
    after it: device work can wait on a host step), ``future()`` (a
    concurrent.futures.Future), and ``await event`` in asyncio."""

    __slots__ = ()

    def add_done_callback(self, fn):
        self.on_complete(lambda state: fn(self))

    def done(self):
        return self.state in (0, -1)

    def future(self):
        """A concurrent.futures.Future: result True, or the failure
        (EventFailedError)."""
        import concurrent.futures

        f = concurrent.futures.Future()
        f.set_running_or_notify_cancel()

        def settle(state):
            if state == 0:
                f.set_result(True)
            else:
                from ._errors import EventFailedError

                f.set_exception(EventFailedError("the command failed", -14, "KILN_ERROR_EVENT_FAILED"))

        self.on_complete(settle)
        return f

    def __await__(self):
        import asyncio

        return asyncio.wrap_future(self.future()).__await__()


_k._set_event_class(Event)
atexit.register(_k._shutdown)  # no callbacks into a finalising interpreter


_tls = threading.local()
_default = {}
_default_lock = threading.Lock()


class Queue(_k.QueueBase):
    """A command queue on one device of a context.

    ``with Queue(...) as q:`` makes q the current queue of the thread (the
    one arrays are created on when no queue is given) and finishes and
    closes it at the end; using it afterwards raises ValueError."""

    __slots__ = ()

    def __new__(cls, context=None, device=None, profiling=False, out_of_order=False):
        if context is None:
            context = Context(device if device is not None else None)
        if device is None:
            device = context.devices[0]
        elif isinstance(device, str):
            device = get_device(device)
        flags = (_k.KILN_QUEUE_PROFILING if profiling else 0) | (
            _k.KILN_QUEUE_OUT_OF_ORDER if out_of_order else 0
        )
        return super().__new__(cls, context, device._base, flags)

    @property
    def device(self):
        return _device_from_base(_k.QueueBase.device.__get__(self))

    def __enter__(self):
        stack = getattr(_tls, "stack", None)
        if stack is None:
            stack = _tls.stack = []
        stack.append(self)
        return self

    def __exit__(self, *exc):
        _tls.stack.pop()
        self.close()
        return False

    def __repr__(self):
        if self.closed:
            return "<kiln.Queue (closed)>"
        return f"<kiln.Queue on {self.device.id}>"


def get_default_queue():
    """The thread's current queue (innermost ``with Queue``), else the
    process's default queue on get_device() (made on first use)."""
    stack = getattr(_tls, "stack", None)
    if stack:
        return stack[-1]
    q = _default.get("q")
    if q is None or q.closed:
        with _default_lock:
            q = _default.get("q")
            if q is None or q.closed:
                q = _default["q"] = Queue()
    return q


def set_default_queue(queue):
    """Sets the process's default queue (None: make a new one on next use)."""
    with _default_lock:
        _default["q"] = queue


def finish():
    """Finishes the default queue."""
    get_default_queue().finish()


def wait_for_events(events):
    for e in events:
        e.wait()


def trace(path):
    """Starts kiln's timeline into a Chrome/Perfetto trace file; use as
    ``with kiln.trace("t.json"):`` or call stop_trace()."""
    _k.trace(str(path))
    return _Trace()


def stop_trace():
    _k.trace(None)


class _Trace:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        stop_trace()
        return False
