import subprocess
import sys

import numpy as np
import pytest


def test_version(kiln):
    assert kiln.__version__ == "0.1.0"
    assert kiln.kiln_version


def test_import_touches_no_device():
    # importing kiln must not load a backend or create a context
    code = ("import kiln, sys; import kiln._core as c; "
            "sys.exit(0 if c._default.get('q') is None and not c._DEVICE_CACHE else 1)")
    assert subprocess.run([sys.executable, "-c", code]).returncode == 0


def test_cli_devices(kiln):
    r = subprocess.run([sys.executable, "-m", "kiln", "devices"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert kiln.devices()[0].id in r.stdout


def test_devices(kiln):
    devs = kiln.devices()
    assert devs
    d = kiln.get_device()
    assert d in devs
    info = d.info()
    assert info["id"] and info["name"] and info["compute_units"] >= 1
    assert repr(d).startswith("<kiln.Device")
    assert kiln.get_device(devs[0].id) == devs[0]
    with pytest.raises(kiln.NoDeviceError) as e:
        kiln.get_device("no-such-device-xyz")
    assert e.value.status_name == "KILN_ERROR_NO_DEVICE"
    assert "no-such-device-xyz" in e.value.message


def test_kiln_device_env(kiln):
    dev = kiln.devices()[0].id
    code = "import kiln; print(kiln.get_default_queue().device.id)"
    env = dict(__import__("os").environ, KILN_DEVICE=dev)
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.stdout.strip() == dev
    env["KILN_DEVICE"] = "no-such-device-xyz"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env)
    assert r.returncode != 0 and "NoDeviceError" in r.stderr


def test_context_queue(kiln):
    ctx = kiln.Context()
    assert ctx.devices
    q = kiln.Queue(ctx)
    assert q.context == ctx
    a = kiln.asarray([1.0, 2.0], queue=q)
    assert a.queue is q
    q.finish()
    with kiln.Queue(ctx) as q2:
        assert kiln.get_default_queue() is q2
        b = kiln.zeros(3)
        assert b.queue is q2
    assert kiln.get_default_queue() is not q2
    assert q2.closed
    with pytest.raises(ValueError):
        q2.finish()
    with pytest.raises(ValueError):
        b + b  # the queue is closed: an exception, not a crash
    with pytest.raises(ValueError):
        b.get()


def test_events_and_profiling(kiln):
    q = kiln.Queue(profiling=True)
    prg = kiln.Program(q.context, "KILN_KERNEL void k(KILN_GLOBAL float *x) { x[kiln_global_id(0)] = 1; }").build()
    x = kiln.empty(64, np.float32, queue=q)
    ev = prg.k(q, 64, None, x)
    assert ev.wait() is True
    assert ev.state == 0
    t = ev.times
    assert t["end"] >= t["start"] > 0
    ev2 = prg.k(q, (64,), (16,), x, wait_for=[ev])
    ev2.wait(timeout=10)
    assert (x.get() == 1).all()
    # events made inside the wait list itself live through the launch
    ev3 = prg.k(q, 64, None, x, wait_for=(prg.k(q, 64, None, x) for _ in range(3)))
    assert ev3.wait(timeout=10)
    with pytest.raises(TypeError):
        prg.k(q, 64, None, x, wait_for=[1])
    with pytest.raises(TypeError):
        prg.k(q, 64, None, x, bogus=1)


def test_pool_stats(kiln):
    s = kiln.get_pool_stats()
    assert "bytes_in_use" in s and s["allocations"] >= 0
    assert kiln.trim_pool() >= 0


def test_trace(kiln, tmp_path):
    p = tmp_path / "t.json"
    with kiln.trace(p):
        (kiln.arange(100) * 2).get()
    assert p.exists() and p.stat().st_size > 0


def test_gil_released(kiln):
    # a thread keeps running Python while the main thread blocks in kiln
    import threading
    import time

    q = kiln.Queue()
    src = ("KILN_KERNEL void spin(KILN_GLOBAL float *x, int n) { float s = 0; "
           "for (int k = 0; k < n; k++) s = s * 0.999f + k; x[kiln_global_id(0)] = s; }")
    prg = kiln.Program(q.context, src).build()
    x = kiln.empty(64, np.float32, queue=q)
    ticks = []
    stop = threading.Event()

    def count():
        while not stop.is_set():
            ticks.append(1)
            time.sleep(0.001)

    t = threading.Thread(target=count)
    t.start()
    t0 = time.perf_counter()
    prg.spin(q, 64, None, x, 3_000_000)
    q.finish()
    dt = time.perf_counter() - t0
    stop.set()
    t.join()
    if dt > 0.05:
        assert len(ticks) >= 5, (dt, len(ticks))


def test_event_callbacks_futures_asyncio(kiln):
    import asyncio
    import threading

    q = kiln.get_default_queue()
    prg = kiln.Program(q.context, "KILN_KERNEL void one(KILN_GLOBAL float *x) { x[kiln_global_id(0)] = 1; }").build()
    x = kiln.zeros(64, np.float32)
    ev = prg.one(q, 64, None, x)
    assert isinstance(ev, kiln.Event)
    seen = []
    done = threading.Event()

    def cb(e):
        seen.append((e is ev, threading.current_thread().name))
        done.set()

    ev.add_done_callback(cb)
    assert done.wait(10) and seen[0][0]
    f = prg.one(q, 64, None, x).future()
    assert f.result(timeout=10) is True

    async def main():
        await prg.one(q, 64, None, x)
        return float(x.sum())

    assert asyncio.run(main()) == 64.0
    # an exception inside a callback is reported, not lost, and kiln goes on
    import sys

    reported = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: (reported.append(u.exc_value), done.set())
    try:
        done.clear()
        prg.one(q, 64, None, x).add_done_callback(lambda e: 1 / 0)
        assert done.wait(10)
    finally:
        sys.unraisablehook = old
    assert isinstance(reported[0], ZeroDivisionError)
    # waiting with the GIL released while callbacks need it: no deadlock
    for _ in range(50):
        prg.one(q, 64, None, x).add_done_callback(lambda e: None)
    q.finish()


def test_event_then_chains_host_and_device(kiln):
    """Event.then(fn): fn(state) on kiln's callback thread after the event;
    the new event completes after fn, and device work can wait on it."""
    import threading

    q = kiln.get_default_queue()
    prg = kiln.Program(q.context, """
KILN_KERNEL void twice(KILN_GLOBAL float *x) { x[kiln_global_id(0)] *= 2; }
""").build()
    x = kiln.asarray(np.arange(257, dtype=np.float32))
    seen = []
    ev = prg.twice(q, 257, None, x)
    nxt = ev.then(lambda state: seen.append((state, threading.current_thread() is not threading.main_thread())))
    assert isinstance(nxt, kiln.Event)
    after = prg.twice(q, 257, None, x, wait_for=[nxt])  # device work behind the host step
    after.wait()
    assert nxt.state == 0 and seen == [(0, True)]
    assert np.array_equal(x.get(), 4 * np.arange(257, dtype=np.float32))
    # chains of continuations run in order
    order = []
    e = q.marker()
    for i in range(5):
        e = e.then(lambda state, i=i: order.append(i))
    e.wait()
    assert order == [0, 1, 2, 3, 4]
    # fn raising (reported) or returning False fails the next event
    import sys

    reported = []
    old = sys.unraisablehook
    sys.unraisablehook = lambda u: reported.append(u.exc_value)
    try:
        bad = q.marker().then(lambda state: 1 / 0)
        with pytest.raises(kiln.KilnError):
            bad.wait()
    finally:
        sys.unraisablehook = old
    assert isinstance(reported[0], ZeroDivisionError)
    no = q.marker().then(lambda state: False)
    with pytest.raises(kiln.KilnError):
        no.wait()
    assert no.state == -1
    with pytest.raises(TypeError, match="callable"):
        q.marker().then(3)
