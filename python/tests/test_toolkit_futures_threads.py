"""Issue 44 items 3, 6, 7: partition, histogram with edges, the hash
table and the list builder, the long leak test and objects shared
between threads."""
import threading
import time

import numpy as np
import pytest

from conftest import SIZES

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64]


def _random(rng, dt, shape):
    dt = np.dtype(dt)
    if dt.kind == "f":
        x = rng.standard_normal(shape).astype(dt)
        if x.size > 3:
            x.flat[::7] = np.nan  # NaNs sort last, as NumPy
        return x
    info = np.iinfo(dt)
    return rng.integers(max(info.min, -100), min(info.max, 100), shape, endpoint=True).astype(dt)


def _check_partition(got, x, kth, axis):
    """got is a partition of x around kth along axis (NumPy's contract)."""
    want = np.partition(x, kth, axis=axis)
    srt = np.sort(x, axis=axis)
    g = np.moveaxis(got, axis, -1)
    s = np.moveaxis(srt, axis, -1)
    assert g.shape == s.shape
    # the same multiset per row, the kth in place, smaller before, larger after
    assert np.array_equal(np.sort(g, axis=-1), s, equal_nan=True)
    for k in np.atleast_1d(kth):
        k = int(k) % g.shape[-1]
        assert np.array_equal(g[..., k], s[..., k], equal_nan=True)
        assert np.array_equal(g[..., k], np.moveaxis(want, axis, -1)[..., k], equal_nan=True)
        pivot = g[..., k:k + 1]
        if g.dtype.kind == "f":
            assert not np.any(g[..., :k] > pivot)
            assert not np.any((g[..., k + 1:] < pivot))
        else:
            assert np.all(g[..., :k] <= pivot) and np.all(g[..., k + 1:] >= pivot)


@pytest.mark.parametrize("dt", DTYPES)
def test_partition_1d(kiln, rng, dt):
    for n in SIZES:
        if n == 0:
            continue
        x = _random(rng, dt, n)
        a = kiln.asarray(x)
        for kth in {0, n // 2, n - 1, -1}:
            _check_partition(kiln.partition(a, kth).get(), x, kth, -1)
        ks = sorted({0, n // 3, n - 1})
        _check_partition(kiln.partition(a, ks).get(), x, ks, -1)
        i = kiln.argpartition(a, n // 2).get()
        _check_partition(x[i], x, n // 2, -1)


def test_partition_empty_and_errors(kiln):
    # NumPy checks no kth on an empty axis
    for shape in [(0,), (3, 0)]:
        x = np.zeros(shape, np.float32)
        got = kiln.partition(kiln.asarray(x), 0).get()
        assert got.shape == np.partition(x, 0).shape
    b = kiln.asarray(np.arange(5, dtype=np.int32))
    for bad in (5, -6, [0, 5]):
        with pytest.raises(ValueError, match="out of bounds"):
            kiln.partition(b, bad)
    with pytest.raises(TypeError):
        kiln.partition(b, 1.5)
    with pytest.raises(ValueError, match="Booleans"):
        kiln.partition(b, True)
    with pytest.raises(np.exceptions.AxisError):
        kiln.partition(b, 0, axis=1)
    with pytest.raises(np.exceptions.AxisError):
        kiln.partition(kiln.asarray(np.zeros(())), 0)
    z = np.array([[3.0, 1.0, 2.0, 0.0], [0.0, 5.0, 1.0, 4.0], [2.0, 0.0, 9.0, 1.0]])
    got = kiln.argpartition(kiln.asarray(z), 1, axis=0).get()  # any axis now
    assert np.array_equal(got, np.argsort(z, axis=0, kind="stable"))
    with pytest.raises(ValueError):
        kiln.partition(b, 1, kind="quick")
    with pytest.raises(NotImplementedError):
        kiln.partition(b, 1, order="x")
    # NumPy's own functions dispatch to kiln's (__array_function__)
    got = np.partition(b, 2)
    assert isinstance(got, kiln.Array) and got.get()[2] == 2


@pytest.mark.parametrize("dt", [np.int32, np.float32, np.float64, np.uint8])
def test_partition_nd_axes(kiln, rng, dt):
    for shape in [(1, 1), (3, 257), (7, 31, 2), (5, 1031)]:
        x = _random(rng, dt, shape)
        a = kiln.asarray(x)
        for axis in range(-len(shape), len(shape)):
            kth = shape[axis] // 2
            _check_partition(kiln.partition(a, kth, axis=axis).get(), x, kth, axis)
        kth = shape[-1] - 1
        _check_partition(np.take_along_axis(x, kiln.argpartition(a, kth).get(), -1), x, kth, -1)
    x = _random(rng, dt, (4, 6))
    _check_partition(kiln.partition(kiln.asarray(x), 5, axis=None).get(), x.ravel(), 5, -1)
    # a strided view and the in-place method
    v = kiln.asarray(x)[:, ::2]
    _check_partition(kiln.partition(v, 1).get(), x[:, ::2], 1, -1)
    a = kiln.asarray(x)
    a.partition(2)
    _check_partition(a.get(), x, 2, -1)


@pytest.mark.parametrize("dt", DTYPES)
def test_histogram_edges(kiln, rng, dt):
    for n in SIZES:
        x = _random(rng, dt, n)
        finite = x[~np.isnan(x)] if x.dtype.kind == "f" else x
        a = kiln.asarray(x)
        lo = float(finite.min()) if finite.size else 0.0
        hi = float(finite.max()) if finite.size else 1.0
        for edges in (np.array([lo, hi]), np.linspace(lo - 1, hi + 1, 8),
                      np.unique(np.sort(rng.uniform(lo - 2, hi + 2, 13))),
                      np.array([lo, lo, (lo + hi) / 2, hi])):  # a repeated edge: an empty bin
            # NumPy compares in the promoted dtype; kiln in float64: give
            # float64 data to NumPy for the reference
            want, we = np.histogram(x.astype(np.float64), bins=edges)
            h, e = kiln.histogram(a, bins=edges)
            assert h.dtype == np.int64
            assert np.array_equal(h.get(), want), (n, edges)
            assert np.array_equal(e, we)
    # integer edges as a list (NumPy returns them as an int array)
    x = rng.integers(0, 10, 1000).astype(np.int32)
    h, e = kiln.histogram(kiln.asarray(x), [0, 2, 5, 9])
    wh, we = np.histogram(x, [0, 2, 5, 9])
    assert np.array_equal(h.get(), wh) and np.array_equal(e, we) and e.dtype == we.dtype


def test_histogram_edges_weights_and_kiln_edges(kiln, rng):
    for n in (0, 1, 7, 257, 4099):
        x = rng.standard_normal(n)
        edges = np.array([-3.0, -1.0, -0.25, 0.0, 0.5, 2.0, 3.0])
        for wdt in (np.float32, np.float64, np.int32, np.int64):
            w = (rng.standard_normal(n) * 10).astype(wdt)
            h, _ = kiln.histogram(kiln.asarray(x), edges, weights=kiln.asarray(w))
            want, _ = np.histogram(x, edges, weights=w)
            assert h.dtype == w.dtype
            if wdt == np.float32:
                assert np.allclose(h.get(), want, rtol=1e-4, atol=1e-3)
            else:
                assert np.allclose(h.get(), want), wdt
        # edges as a kiln Array come back as that Array
        ke = kiln.asarray(edges)
        h, e = kiln.histogram(kiln.asarray(x), ke)
        assert e is ke
        assert np.array_equal(h.get(), np.histogram(x, edges)[0])
    # range is ignored with edges (NumPy's rule)
    x = rng.standard_normal(100)
    h, _ = kiln.histogram(kiln.asarray(x), [-1.0, 0.0, 1.0], range=(5, 6))
    assert np.array_equal(h.get(), np.histogram(x, [-1.0, 0.0, 1.0], range=(5, 6))[0])


def test_histogram_edges_errors(kiln):
    a = kiln.asarray(np.arange(10.0))
    with pytest.raises(ValueError, match="monotonically"):
        kiln.histogram(a, [0.0, 2.0, 1.0])
    with pytest.raises(ValueError, match="1d"):
        kiln.histogram(a, [[0.0, 1.0]])
    with pytest.raises(ValueError):
        kiln.histogram(a, [1.0])
    with pytest.raises(ValueError):
        kiln.histogram(a, [0.0, np.nan])
    with pytest.raises(NotImplementedError):  # the one estimator not bound
        kiln.histogram(a, "stone")


# ---------------------------------------------------------------- hash table

def _unique_keys(rng, n, dt):
    # reserved: -1, -2 (0xFFFFFFFF, 0xFFFFFFFE)
    hi = 2**31 - 3 if dt == np.int32 else 2**32 - 3
    lo = -2**31 if dt == np.int32 else 0
    k = np.unique(rng.integers(lo, hi, n * 2 + 8, dtype=np.int64))
    rng.shuffle(k)
    k = k[:n].astype(dt)
    return k[(k != dt(-1 if dt == np.int32 else 0xFFFFFFFF)) & (k != dt(-2 if dt == np.int32 else 0xFFFFFFFE))]


@pytest.mark.parametrize("kd", [np.int32, np.uint32])
@pytest.mark.parametrize("vd", [np.int32, np.uint32, np.float32])
def test_hash_table_against_dict(kiln, rng, kd, vd):
    for n in SIZES:
        keys = _unique_keys(rng, n, kd)
        vals = (rng.standard_normal(keys.size) * 1000).astype(vd) if vd == np.float32 else \
            rng.integers(0, 2**31 - 1, keys.size).astype(vd)
        t = kiln.HashTable(max(n, 1), kd, vd)
        assert t.capacity == max(n, 1) and t.key_dtype == kd and t.value_dtype == vd
        t.insert(keys, vals)
        ref = dict(zip(keys.tolist(), vals.tolist()))
        assert len(t) == len(ref)
        probe = np.concatenate([keys, _unique_keys(rng, 50, kd)])
        got, found = t.lookup(kiln.asarray(probe), missing=7, return_found=True)
        want = np.array([ref.get(k, 7) for k in probe.tolist()], vd)
        assert np.array_equal(got.get(), want)
        assert np.array_equal(found.get(), np.array([k in ref for k in probe.tolist()]))
        # replace half the values, erase a third
        half = keys[: keys.size // 2]
        t.insert(half, vd(5))
        ref.update({k: vd(5).item() for k in half.tolist()})
        gone = keys[::3]
        t.erase(gone)
        for k in gone.tolist():
            ref.pop(k, None)
        assert len(t) == len(ref)
        got = t.lookup(keys, missing=0).get()
        assert np.array_equal(got, np.array([ref.get(k, 0) for k in keys.tolist()], vd))
        assert np.array_equal(t.contains(keys).get(), np.array([k in ref for k in keys.tolist()]))
        t.clear()
        assert len(t) == 0


def test_hash_table_add_counts(kiln, rng):
    for n in (0, 1, 7, 257, 4099):
        keys = rng.integers(0, 50, n).astype(np.int32)
        t = kiln.HashTable(64)
        t.add(keys)  # counts
        u, c = np.unique(keys, return_counts=True)
        assert np.array_equal(t.lookup(u).get(), c.astype(np.int32))
        w = rng.integers(-5, 5, n).astype(np.int32)
        t.add(kiln.asarray(keys), w)
        ref = {k: cnt for k, cnt in zip(u.tolist(), c.tolist())}
        for k, x in zip(keys.tolist(), w.tolist()):
            ref[k] += x
        assert np.array_equal(t.lookup(u).get(), np.array([ref[k] for k in u.tolist()], np.int32))
        # float values
        tf = kiln.HashTable(64, value_dtype=np.float32)
        wf = rng.random(n).astype(np.float32)
        tf.add(keys, wf)
        want = np.zeros(50, np.float64)
        np.add.at(want, keys, wf)
        assert np.allclose(tf.lookup(u).get(), want[u], rtol=1e-5, atol=1e-5)


def test_hash_table_shapes_and_errors(kiln):
    t = kiln.HashTable(8)
    keys = np.arange(6, dtype=np.int32).reshape(2, 3)
    t.insert(keys, keys * 2)
    assert t.lookup(keys).shape == (2, 3)
    assert np.array_equal(t.lookup(keys).get(), keys * 2)
    # a strided view of keys
    assert np.array_equal(t.lookup(kiln.asarray(keys)[:, ::2]).get(), keys[:, ::2] * 2)
    with pytest.raises(kiln.InvalidArgumentError):
        t.insert([7, -1], [1, 2])  # reserved key: nothing stored
    assert len(t) == 6
    with pytest.raises(ValueError):
        t.insert([1, 2], [1])
    with pytest.raises(TypeError):
        t.insert(np.array([1.5]), [1])
    t.insert([6, 7], [0, 0])
    with pytest.raises(kiln.OutOfRangeError):
        t.insert(np.arange(100, 120, dtype=np.int32), 1)  # over the capacity of 8
    with pytest.raises(TypeError):
        kiln.HashTable(8, np.int64)
    with pytest.raises(TypeError):
        kiln.HashTable(8, np.int32, np.float64)
    with pytest.raises(ValueError):
        kiln.HashTable(0)
    with pytest.raises(kiln.InvalidArgumentError):
        kiln.HashTable(2**31)
    assert "HashTable" in repr(t)


def test_hash_table_closed_queue(kiln):
    q = kiln.Queue()
    t = kiln.HashTable(8, queue=q)
    t.insert([1], [2])
    q.close()
    with pytest.raises(ValueError, match="closed"):
        len(t)
    with pytest.raises(ValueError, match="closed"):
        t.insert([3], [4])


# -------------------------------------------------------------- list builder

@pytest.mark.parametrize("dt", [np.int32, np.int64, np.float32, np.float64, np.uint8])
def test_list_builder(kiln, rng, dt):
    t = np.dtype(dt).name
    cname = {"int32": "int", "int64": "long", "float32": "float", "float64": "double",
             "uint8": "uchar"}[t]
    lb = kiln.ListBuilder(None, f"const int *m, const {cname} *x",
                          dt, "for (int j = 0; j < m[i]; j++) KILN_EMIT(x[i] + j);")
    for n in SIZES:
        m = rng.integers(0, 5, n).astype(np.int32)
        x = rng.integers(0, 50, n).astype(dt)
        items, offsets = lb(n, kiln.asarray(m), kiln.asarray(x))
        want = [np.array([x[i] + j for j in range(m[i])], dt) for i in range(n)]
        flat = np.concatenate(want) if n else np.zeros(0, dt)
        assert items.dtype == dt and offsets.dtype == np.int64
        assert offsets.shape == (n + 1,)
        assert np.array_equal(offsets.get(), np.concatenate([[0], np.cumsum(m)]))
        assert np.array_equal(items.get(), flat)
        got = lb.lists(n, kiln.asarray(m), kiln.asarray(x))
        assert len(got) == n and all(np.array_equal(g, w) for g, w in zip(got, want))


def test_list_builder_neighbours_and_errors(kiln, rng):
    # pairs closer than r: the classic use
    n = 300
    p = rng.random(n).astype(np.float32)
    # n is the range's size in every generator expression
    lb = kiln.ListBuilder(None, "const float *p, float r", np.int32,
                          "for (int j = 0; j < n; j++) if (j != i && fabs(p[i] - p[j]) < r) "
                          "KILN_EMIT(j);")
    got = lb.lists(n, kiln.asarray(p), 0.01)
    for i in range(n):
        want = [j for j in range(n) if j != i and abs(p[i] - p[j]) < np.float32(0.01)]
        assert got[i].tolist() == want
    with pytest.raises(kiln.BuildError):
        kiln.ListBuilder(None, "const int *m", np.int32, "KILN_EMIT(undefined_thing);")
    with pytest.raises(TypeError):
        kiln.ListBuilder(None, "const int *m", np.complex64, "KILN_EMIT(1);")
    with pytest.raises(ValueError):
        lb(-1, kiln.asarray(p), 0.01)


@pytest.mark.parametrize("n", [0, 1, 97, 1000])
def test_list_builder_capacity(kiln, rng, n):
    # the non-blocking form: capacity at, below and above the total
    lb = kiln.ListBuilder(None, "const int *m", np.int32,
                          "for (int j = 0; j < m[i]; j++) KILN_EMIT(i * 10 + j);")
    m = rng.integers(0, 5, n).astype(np.int32)
    want = np.array([i * 10 + j for i in range(n) for j in range(m[i])], np.int32)
    total = len(want)
    for cap in (total, total // 2, total + 7, 0):
        items, offsets, check = lb(n, kiln.asarray(m), capacity=cap)
        assert items.shape == (cap,) and offsets.shape == (n + 1,)
        assert np.array_equal(offsets.get(), np.concatenate([[0], np.cumsum(m)]))
        have = min(cap, total)
        assert np.array_equal(items.get()[:have], want[:have])
        assert check.get().tolist() == [0]
    with pytest.raises(ValueError, match="capacity"):
        lb(n, kiln.asarray(m), capacity=-1)


def test_list_builder_capacity_nondeterministic(kiln):
    # an operation whose fill emits more than its count: reported in check
    lb = kiln.ListBuilder(None, "int *calls", np.int64,
                          "int r = calls[i]++; for (int t = 0; t < 1 + 3 * r; t++) KILN_EMIT(t);")
    calls = kiln.asarray(np.zeros(100, np.int32))
    items, offsets, check = lb(100, calls, capacity=150)
    assert offsets.get()[-1] == 100 and items.shape == (150,)
    assert 1 <= int(check.get()[0]) <= 100


# ------------------------------------------------------------------ futures

@pytest.mark.parametrize("dt", [np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32,
                                np.float64, np.bool_])
def test_read_future(kiln, rng, dt):
    for n in SIZES:
        x = (rng.standard_normal(n) * 10).astype(dt)
        a = kiln.asarray(x)
        f = kiln.read_future(a * 1 if dt != np.bool_ else a)
        got = f.result()
        assert got.dtype == np.dtype(dt) and got.shape == (n,)
        assert np.array_equal(got, x)
        assert f.done() and f.state == 0
    x = rng.standard_normal((3, 5))
    assert np.array_equal(kiln.asarray(x)[:, ::2].read_future().result(), x[:, ::2])
    s = kiln.asarray(x).sum()
    assert np.allclose(s.read_future().result(), x.sum())
    with pytest.raises(TypeError):
        kiln.read_future(x)


def test_future_chains(kiln, rng):
    x = rng.standard_normal(1031)
    f = kiln.asarray(x).read_future()
    g = f.then(lambda v: v.sum())
    assert np.allclose(g.result(), x.sum()) and g.result().shape == ()
    # host -> device -> host, without blocking in the step
    h = g.then(lambda v: (kiln.asarray(np.full(7, v)) * 2).read_future())
    assert np.allclose(h.result(), np.full(7, 2 * x.sum()))
    assert f.then(lambda v: None).result() is None
    assert f.then(lambda v: b"abc").result() == b"abc"
    assert kiln.future_ready(np.arange(4)).then(lambda v: v[::-1].copy()).result().tolist() == \
        [3, 2, 1, 0]
    assert kiln.future_ready(b"xy").result() == b"xy"
    # a step's exception travels to the end of the chain, itself
    def bad(v):
        raise KeyError("boom")
    ran = []
    end = f.then(bad).then(lambda v: ran.append(1))
    with pytest.raises(KeyError, match="boom"):
        end.result()
    with pytest.raises(KeyError):
        end.wait()
    assert not ran and end.state == -1
    # a step returning something that is no value fails with a kiln error
    with pytest.raises(TypeError):
        f.then(lambda v: object()).result()
    with pytest.raises(TypeError):
        f.then(3)


def test_when_all_any_cancel_event(kiln, rng):
    fs = [kiln.asarray(np.full(n, i, np.int32)).read_future() for i, n in enumerate((1, 7, 257))]
    assert kiln.when_all(fs).result() is None
    assert kiln.when_any(fs).result() in (0, 1, 2)
    ready = kiln.future_ready(np.int32(5))
    assert kiln.when_any([ready]).result() == 0
    with pytest.raises(TypeError):
        kiln.when_all([])
    with pytest.raises(TypeError):
        kiln.when_all([1])
    # a failed input fails when_all; when_any completes while one completes
    def bad(v):
        raise ValueError("no")
    failed = ready.then(bad)
    with pytest.raises(ValueError, match="no"):
        kiln.when_all([fs[0], failed]).result()
    assert kiln.when_any([failed, fs[1]]).result() == 1
    # a device future cannot be canceled; a settled one neither
    with pytest.raises(kiln.WrongStateError):
        fs[0].cancel()
    # the event settles with the future: device commands can wait on it
    ev = fs[2].event()
    assert isinstance(ev, kiln.Event) and ev.wait()
    b = kiln.zeros(4, np.float32)
    kiln.ElementwiseKernel(None, "float *b", "b[i] = 1")(b, wait_for=[ev]).wait()
    assert b.get().tolist() == [1.0] * 4
    assert "Future" in repr(fs[0])
    # many steps at once from one future (each its own box)
    base = kiln.future_ready(np.int64(3))
    steps = [base.then(lambda v, k=k: v * k) for k in range(50)]
    assert [int(s.result()) for s in steps] == [3 * k for k in range(50)]


# ------------------------------------------------- objects shared by threads

def _run_threads(targets):
    ts = [threading.Thread(target=t) for t in targets]
    for t in ts:
        t.start()
    for t in ts:
        t.join(120)
    assert not any(t.is_alive() for t in ts), "a thread hung"


@pytest.mark.parametrize("round_", range(3))
def test_threads_close_shared_queue(kiln, round_):
    """Several threads use one queue, array, kernel, generator and hash
    table at once while another closes the queue (a with-block's exit):
    no crash, and every failure is the clear ValueError of a closed queue."""
    q = kiln.Queue()
    a = kiln.asarray(np.arange(4099, dtype=np.float32), queue=q)
    prg = kiln.Program(q.context, "KILN_KERNEL void inc(KILN_GLOBAL float *x) "
                                  "{ x[kiln_global_id(0)] += 1; }").build()
    ew = kiln.ElementwiseKernel(q.context, "float *x", "x[i] = x[i] * 1")
    table = kiln.HashTable(64, queue=q)
    started = threading.Barrier(5)
    errors, closed_seen, done = [], [], []

    def worker(kind):
        def run():
            started.wait()
            try:
                for i in range(100_000):  # until the queue is closed
                    if kind == 0:
                        float((a * 2 + 1).sum())
                    elif kind == 1:
                        prg.inc(q, 4099, None, kiln.empty(4099, np.float32, q)).wait()
                    elif kind == 2:
                        ew(a).wait()
                        a.read_future().result()
                    else:
                        table.add([i % 50])
                        table.lookup([1, 2]).get()
                done.append(kind)
            except ValueError as e:
                if "closed" in str(e):
                    closed_seen.append(kind)
                else:
                    errors.append(e)
            except Exception as e:  # noqa: BLE001
                errors.append(e)
        return run

    def closer():
        with q:
            started.wait()
            time.sleep(0.02 * (round_ + 1))
        # two more closes at once from other threads: a no-op each
        _run_threads([q.close, q.close])

    _run_threads([worker(k) for k in range(4)] + [closer])
    assert not errors, errors
    assert len(closed_seen) + len(done) == 4 and closed_seen
    assert q.closed
    for fn in (lambda: a.get(), lambda: a + 1, lambda: q.finish(), lambda: len(table),
               lambda: prg.inc(q, 1, None, a), lambda: ew(a), lambda: a.read_future()):
        with pytest.raises(ValueError, match="closed"):
            fn()
    q.close()  # again: nothing


def test_threads_end_shared_data_region(kiln, rng):
    """One thread ends a data region (its with block) while others run
    offloads in it: the end waits for those running, later ones raise
    ValueError; no crash, the data copied back."""
    off = kiln.Offload(None, "const double *X, double *D", "D[i] = X[i] * 2;")
    X = rng.standard_normal(1031)
    D = np.zeros(1031)
    errors, ended = [], []
    inside = threading.Barrier(4)

    def user():
        inside.wait()
        try:
            for _ in range(100_000):  # until the region has ended
                off(1031, kiln.present(X), kiln.present(D), region=region)
        except ValueError as e:
            (ended if "region" in str(e) else errors).append(e)
        except Exception as e:  # noqa: BLE001
            errors.append(e)

    with kiln.data(to=[X], from_=[D]) as region:
        ts = [threading.Thread(target=user) for _ in range(3)]
        for t in ts:
            t.start()
        inside.wait()
        time.sleep(0.02)
    for t in ts:
        t.join(120)
    assert not errors, errors
    assert len(ended) == 3
    assert np.allclose(D, X * 2)


def test_hash_table_non_blocking(kiln, rng):
    """insert/add with blocking=False return Events; the table holds what
    the blocking forms store; a full table fails the event, not the call."""
    t = kiln.HashTable(4096)
    keys = rng.permutation(100000)[:1031].astype(np.int32)
    ev = t.insert(keys, keys * 3, blocking=False)
    assert isinstance(ev, kiln.Event)
    ev2 = t.add(keys[:7], None, blocking=False)  # after the insert, on the table's queue
    ev2.wait()
    assert ev.state == 0 and ev2.state == 0
    want = keys * 3
    want[:7] += 1
    assert np.array_equal(t.lookup(keys).get(), want) and len(t) == 1031
    small = kiln.HashTable(8)
    bad = small.insert(np.arange(100, 140, dtype=np.int32), 1, blocking=False)
    with pytest.raises(kiln.KilnError):
        bad.wait()
    assert bad.state == -1
