"""kiln.distributed (python/kiln/distributed.py) under mpirun -np 1 and -np 2.

Each pytest test starts `mpirun -np N python this_file worker`; every rank
runs the checks below against NumPy references, on NumPy arrays and on
kiln arrays of the communicator's queue, and exits non-zero on the first
failure. Skips where mpi4py, mpirun or libkiln_mpi (the package's own,
built when its build found MPI; else $KILN_MPI_LIBRARY or libkiln_mpi.so.0)
is missing.
"""

import os
import shutil
import subprocess
import sys

import numpy as np


def _load_module():
    import kiln.distributed

    return kiln.distributed


def _mpi_run(np_):
    import pytest

    try:
        import mpi4py  # noqa: F401
    except ImportError:
        pytest.skip("mpi4py is not installed")
    kd = _load_module()
    if kd._load() is None:
        pytest.skip(f"libkiln_mpi: {kd._why}")
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        pytest.skip("no mpirun")
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1",
               OMPI_MCA_rmaps_base_oversubscribe="1",
               KILN_MPI_TIMEOUT_MS=os.environ.get("KILN_MPI_TIMEOUT_MS", "120000"))
    r = subprocess.run([mpirun, "-np", str(np_), sys.executable, __file__, "worker"],
                       env=env, capture_output=True, text=True, timeout=400)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out[-4000:]
    assert out.count("kiln.distributed worker: ok") == np_, out[-4000:]


def test_distributed_np1():
    _mpi_run(1)


def test_distributed_np2():
    _mpi_run(2)


# ------------------------------------------------------------ the worker
def worker():
    import mpi4py

    mpi4py.rc.thread_level = "multiple"
    from mpi4py import MPI

    kd = _load_module()
    world = MPI.COMM_WORLD
    with kd.Communicator(world) as c:
        R, P = c.rank, c.size
        assert (R, P) == (world.Get_rank(), world.Get_size())
        import kiln

        if c.queue.device.type == "cpu":  # CI: staged through host memory
            assert c.transport == "staged" and not c.cuda_aware
            assert c.direct == (c.queue.device.backend == "host"
                                and os.environ.get("KILN_MPI_DIRECT") != "0")
        else:  # a GPU: NCCL with one rank a GPU, else staged
            assert c.transport in ("staged", "nccl"), c.transport
        rng = np.random.default_rng(5)  # the same on every rank
        for n in (0, 1, 7, 257, 1000):
            xs = [rng.integers(-50, 50, n).astype(np.int32) for _ in range(P)]
            got = c.allreduce(xs[R], "sum")
            assert np.array_equal(got, np.sum(xs, axis=0).astype(np.int32)), (n, got)
            got = c.allreduce(xs[R].astype(np.float64), "max")
            assert np.array_equal(got, np.max(xs, axis=0).astype(np.float64))
            got = c.allgather(xs[R])
            assert np.array_equal(got, np.concatenate(xs)), n
            got = c.broadcast(xs[R], root=P - 1)
            assert np.array_equal(got, xs[P - 1])
            got = c.gather(xs[R].astype(np.float32), root=P - 1)
            if R == P - 1:
                assert np.array_equal(got, np.concatenate(xs).astype(np.float32)), n
            else:
                assert got is None
        # distributed arrays: scatter, sort, cumsum, histogram, gather
        for n in (0, 1, 31, 1001):
            data = rng.normal(size=n)
            d = c.scatter(data if R == 0 else None, root=0, dtype=np.float64, shape=(n,))
            assert d.count == n // P + (R < n % P)
            if n == 31:  # as an event: the gather on comm.queue waits for it
                ev = d.sort(blocking=False)
                assert isinstance(ev, kiln.Event)
                c.wait(ev)
            else:
                d.sort()
            out = d.gather(root=0)
            if R == 0:
                assert np.array_equal(out, np.sort(data)), n
            total = d.sum()
            assert isinstance(total, np.float64) and np.isclose(total, data.sum(), rtol=1e-12,
                                                                atol=1e-12), (total, data.sum())
            h = d.histogram(8, -2.0, 2.0)
            ref, _ = np.histogram(data, bins=8, range=(-2.0, 2.0))
            assert np.array_equal(h, ref), (h, ref)
            ints = c.scatter(np.arange(n, dtype=np.int64) if R == 0 else None, dtype=np.int64,
                             shape=(n,))
            assert ints.sum() == n * (n - 1) // 2
            got = ints.cumsum().gather()
            if R == 0:
                assert np.array_equal(got, np.cumsum(np.arange(n, dtype=np.int64)))
        # a user-defined reduction: every rank its own [0, n), n = R * 7
        sq = c.reduction("const int *x, long k", "long", "0", "a + b", "(long)x[i] * x[i] + k")
        mine = np.arange(R * 7, dtype=np.int32) - 3
        got = sq(mine.size, mine, 2)
        want = sum(int(((np.arange(r * 7) - 3) ** 2).sum()) + 2 * r * 7 for r in range(P))
        assert isinstance(got, np.int64) and got == want, (got, want)
        got = sq(mine.size, kiln.asarray(mine, queue=c.queue), 0)
        assert got == want - sum(2 * r * 7 for r in range(P))
        mm = c.reduction("const float *x", "mm", "mm_make(INFINITY, -INFINITY)",
                         "mm_make(fmin(a.lo, b.lo), fmax(a.hi, b.hi))", "mm_make(x[i], x[i])",
                         preamble="typedef struct { float lo, hi; } mm;\n"
                                  "KILN_FUNC mm mm_make(float lo, float hi) "
                                  "{ mm r; r.lo = lo; r.hi = hi; return r; }\n",
                         out_size=8)
        more = np.arange((R + 1) * 5, dtype=np.float32) * (R - 0.5)
        lohi = np.frombuffer(mm(more.size, more), dtype=np.float32)
        allv = np.concatenate([np.arange((r + 1) * 5) * (r - 0.5) for r in range(P)])
        assert lohi[0] == allv.min() and lohi[1] == allv.max(), lohi
        try:
            c.reduction("const int *x", "struct_t", "0", "a + b", "x[i]")
            raise AssertionError("a struct out_type without out_size was accepted")
        except ValueError:
            pass
        # row blocks with a halo, redistributed onto one rank and back
        a = np.arange(13 * 4, dtype=np.int32).reshape(13, 4)
        rows = c.scatter(a if R == 0 else None, dtype=np.int32, shape=a.shape, halo=1)
        rows.halo_exchange()
        loc = rows.local().reshape(-1, 4)
        s, k = rows.start, rows.count
        if R > 0:
            assert np.array_equal(loc[0], a[s - 1])
        if R < P - 1:
            assert np.array_equal(loc[k + 1], a[s + k])
        one = rows.redistribute((52,), ranks=1)
        assert one.ranks == 1 and one.count == (52 if R == 0 else 0)
        back = one.redistribute((13, 4))
        got = back.gather()
        if R == 0:
            assert np.array_equal(got, a)
        # kiln arrays on the communicator's queue: the collectives stay on
        # the device and return kiln arrays; other contexts are refused
        q = c.queue
        assert isinstance(q, kiln.Queue) and q.context._int_ptr() == c.queue.context._int_ptr()
        for n in (0, 1, 7, 1000):
            xs = [rng.integers(-50, 50, n).astype(np.float32) for _ in range(P)]
            ka = kiln.asarray(xs[R].reshape(-1, 1) if n else xs[R], queue=q)
            got = c.allreduce(ka, "sum")
            assert isinstance(got, kiln.Array) and got.shape == (n,)
            assert np.array_equal(got.get(), np.sum(xs, axis=0, dtype=np.float32))
            assert np.array_equal(ka.get().ravel(), xs[R])  # the input is not clobbered
            got = c.allgather(ka)
            assert isinstance(got, kiln.Array) and np.array_equal(got.get(), np.concatenate(xs))
            got = c.broadcast(ka, root=0)
            assert np.array_equal(got.get(), xs[0])
            got = c.gather(ka, root=0)
            if R == 0:
                assert isinstance(got, kiln.Array) and np.array_equal(got.get(),
                                                                      np.concatenate(xs))
            else:
                assert got is None
        blocks = c.scatter(np.arange(10.0) if R == 0 else None, dtype=np.float64, shape=(10,))
        loc = blocks.local_array()
        assert isinstance(loc, kiln.Array) and loc.size == blocks.count
        loc *= 2  # the block itself: the DArray sees it
        q.finish()
        got = blocks.gather()
        if R == 0:
            assert np.array_equal(got, 2 * np.arange(10.0))
        other = kiln.asarray(np.zeros(3, np.float32), queue=kiln.Queue(kiln.Context()))
        try:
            c.allreduce(other)
        except kd.DistributedError as e:
            assert "another context" in str(e) and "comm.queue" in str(e), str(e)
        else:
            raise AssertionError("an array of another context passed")
        del ka, got, loc, blocks
        # elementwise ops on blocks, and random fills equal to one device's
        xa = c.scatter(np.arange(1001.0) if R == 0 else None, dtype=np.float64, shape=(1001,))
        xb = c.scatter(np.full(1001, 2.0) if R == 0 else None, dtype=np.float64, shape=(1001,))
        for op, f in (("+", np.add), ("-", np.subtract), ("*", np.multiply), ("/", np.divide)):
            got = eval(f"xa {op} xb").gather()
            if R == 0:
                assert np.array_equal(got, f(np.arange(1001.0), 2.0)), op
        ia = c.scatter(np.arange(7, dtype=np.int32) if R == 0 else None, dtype=np.int32, shape=(7,))
        try:
            ia / ia
        except TypeError:
            pass
        else:
            raise AssertionError("integer / passed")
        import kiln.random as kr

        for dist in ("uniform", "normal"):
            for dt in (np.float32, np.float64):
                g = kr.Generator(2024, "philox", queue=q)
                d = c.random(g, 12345, dtype=dt, dist=dist)
                one = kr.Generator(2024, "philox", queue=q)
                ref = (one.random(12345, dtype=dt) if dist == "uniform"
                       else one.normal(size=12345, dtype=dt)).get()
                got = d.gather()
                if R == 0:
                    assert np.array_equal(got, ref), (dist, dt)  # bit for bit
                assert g.offset == one.offset, (dist, dt)  # the same state after
        # a mismatch raises with both ranks' values
        if P > 1:
            try:
                c.allreduce(np.zeros(3 + R, np.float32))
            except kd.DistributedError as e:
                assert e.status == "KILN_ERROR_MISMATCH" and "rank 1" in str(e), str(e)
            else:
                raise AssertionError("a mismatch passed")
        del d, ints, rows, one, back
    print(f"kiln.distributed worker: ok (rank {R} of {P})", flush=True)


if __name__ == "__main__" and sys.argv[1:] == ["worker"]:
    worker()
