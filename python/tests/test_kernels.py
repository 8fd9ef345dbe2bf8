import numpy as np
import pytest

from conftest import SIZES

SRC = """
KILN_KERNEL void axpb(KILN_GLOBAL float *y, KILN_GLOBAL const float *x, float a, int b, long n) {
    size_t i = kiln_global_id(0);
    if (i < (size_t)n) y[i] = a * x[i] + b;
}
KILN_KERNEL void empty3(KILN_GLOBAL float *x, int n, float s) { }
"""


def test_program_and_launch(kiln, rng):
    q = kiln.get_default_queue()
    prg = kiln.Program(q.context, SRC).build()
    for n in SIZES:
        x = rng.standard_normal(n).astype(np.float32)
        dx, dy = kiln.asarray(x), kiln.empty(n, np.float32)
        if n == 0:
            continue
        ev = prg.axpb(q, (n,), None, dy, dx, 2.5, 3, n)
        assert isinstance(ev, kiln.Event)
        ev.wait()
        assert np.allclose(dy.get(), 2.5 * x + 3, atol=1e-5)
    # numpy scalars and explicit dtypes
    dx = kiln.asarray(np.ones(8, np.float32))
    dy = kiln.empty(8, np.float32)
    prg.axpb(q, 8, 4, dy, dx, np.float32(1.5), np.int32(1), np.int64(8)).wait()
    assert np.allclose(dy.get(), 2.5)
    k = prg.kernel("axpb")
    k.set_scalar_arg_dtypes([None, None, np.float32, np.int32, np.int64])
    k(q, (8,), None, dy, dx, 2, 2, 8).wait()
    assert np.allclose(dy.get(), 4)
    assert k.num_args == 5


def test_kernel_arg_errors(kiln):
    q = kiln.get_default_queue()
    prg = kiln.Program(q.context, SRC).build()
    x = kiln.zeros(4, np.float32)
    with pytest.raises(kiln.KernelArgsError) as e:
        prg.axpb(q, 4, None, x, x, 1.0)  # too few
    assert isinstance(e.value, TypeError) and "axpb" in e.value.message
    with pytest.raises(kiln.KernelArgsError):
        prg.axpb(q, 4, None, 1.0, x, 1.0, 1, 4)  # scalar where a buffer is declared
    with pytest.raises(TypeError):
        prg.axpb(q, 4, None, x, x, "a", 1, 4)
    with pytest.raises(TypeError):
        prg.axpb(q, 4, None, x, x, 1.0, object(), 4)
    with pytest.raises(ValueError):
        prg.axpb(q, 4, None, x[1:], x, 1.0, 1, 4)  # a view with an offset
    with pytest.raises(ValueError):
        prg.axpb(q, (4, 4), (2,), x, x, 1.0, 1, 4)
    with pytest.raises(kiln.KernelNotFoundError):
        prg.no_such_kernel
    with pytest.raises(TypeError):
        prg.axpb()


def test_build_error_carries_log(kiln):
    q = kiln.get_default_queue()
    src = "KILN_KERNEL void bad(KILN_GLOBAL float *x) {\n  x[0] = undefined_thing;\n}\n"
    with pytest.raises(kiln.BuildError) as e:
        kiln.Program(q.context, src).build()
    err = e.value
    assert err.status == -7 and err.status_name == "KILN_ERROR_BUILD"
    assert "undefined_thing" in err.build_log
    assert "undefined_thing" in str(err)


def test_local_memory(kiln):
    q = kiln.get_default_queue()
    src = """KILN_KERNEL void rev(KILN_GLOBAL float *x, KILN_LOCAL float *tmp) {
        size_t l = kiln_local_id(0), n = kiln_local_size(0), g = kiln_group_id(0);
        tmp[l] = x[g * n + l]; kiln_barrier();
        x[g * n + l] = tmp[n - 1 - l]; }"""
    prg = kiln.Program(q.context, src).build()
    x = kiln.asarray(np.arange(32, dtype=np.float32))
    prg.rev(q, 32, 16, x, kiln.LocalMemory(16 * 4)).wait()
    want = np.concatenate([np.arange(16)[::-1], np.arange(16, 32)[::-1]])
    assert np.array_equal(x.get(), want)


def test_elementwise(kiln, rng):
    ctx = kiln.get_default_queue().context
    k = kiln.ElementwiseKernel(ctx, "float a, const float *x, const float *y, float *z",
                               "z[i] = a * x[i] + y[i]", "lin")
    for n in SIZES:
        x = rng.standard_normal(n).astype(np.float32)
        y = rng.standard_normal(n).astype(np.float32)
        z = kiln.empty(n, np.float32)
        k(2.0, kiln.asarray(x), kiln.asarray(y), z).wait()
        assert np.allclose(z.get(), 2 * x + y, atol=1e-6)
    with pytest.raises(kiln.MismatchError):
        k(2.0, kiln.zeros(3, np.float32), kiln.zeros(4, np.float32), kiln.zeros(3, np.float32))
    with pytest.raises(kiln.BuildError) as e:
        kiln.ElementwiseKernel(ctx, "float *x", "x[i] = nope(x[i])")
    assert "nope" in e.value.build_log
    with pytest.raises(kiln.KernelArgsError):
        k(2.0, kiln.zeros(3, np.float32))


def test_reduction_kernel(kiln, rng):
    ctx = kiln.get_default_queue().context
    dot = kiln.ReductionKernel(ctx, np.float64, neutral="0", reduce_expr="a+b",
                               map_expr="x[i]*y[i]", arguments="const double *x, const double *y")
    for n in SIZES:
        x, y = rng.standard_normal(n), rng.standard_normal(n)
        r = dot(kiln.asarray(x), kiln.asarray(y))
        assert r.shape == () and np.isclose(float(r), x @ y)
    mx = kiln.ReductionKernel(ctx, np.int32, "-2147483647", "max(a, b)", "x[i]", "const int *x")
    v = rng.integers(-1000, 1000, 1023).astype(np.int32)
    r, ev = mx(kiln.asarray(v), return_event=True)
    ev.wait()
    assert int(r) == v.max()


def test_scan_kernels(kiln):
    ctx = kiln.get_default_queue().context
    inc = kiln.InclusiveScanKernel(ctx, np.int32, "a+b")
    exc = kiln.ExclusiveScanKernel(ctx, np.int32, "a+b", "0")
    for n in SIZES:
        x = (np.arange(n) % 5).astype(np.int32)
        assert np.array_equal(inc(kiln.asarray(x)).get(), np.cumsum(x))
        assert np.array_equal(exc(kiln.asarray(x)).get(), np.cumsum(x) - x)
    g = kiln.GenericScanKernel(ctx, np.int32, "const int *x, const int *f, int *y", "x[i]", "a+b",
                               "0", "y[i] = item", is_segment_start_expr="f[i]")
    x = np.ones(10, np.int32)
    f = np.array([1, 0, 0, 1, 0, 0, 0, 1, 0, 0], np.int32)
    y = kiln.empty(10, np.int32)
    g(kiln.asarray(x), kiln.asarray(f), y).wait()
    assert y.get().tolist() == [1, 2, 3, 1, 2, 3, 4, 1, 2, 3]


def test_many_launches(kiln):
    q = kiln.get_default_queue()
    prg = kiln.Program(q.context, SRC).build()
    x = kiln.zeros(4, np.float32)
    for _ in range(2000):
        prg.empty3(q, 4, None, x, 4, 1.0)
    q.finish()


def test_offload_and_data_regions(kiln, rng):
    body = ("double d = 0.0; for (int k = 0; k < N; k++) { double t = X[i * N + k] - X[j * N + k]; "
            "d += t * t; } D[i * M + j] = sqrt(d);")
    off = kiln.Offload(None, "const double *X, double *D, int M, int N", body, dims=2, index_names="i,j")
    for m in (1, 7, 33):
        X = rng.standard_normal((m, 3))
        D = np.zeros((m, m))
        off((m, m), kiln.to(X), kiln.from_(D), m, 3)
        R = np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
        assert np.allclose(D, R)
    X = rng.standard_normal((9, 3))
    D = np.zeros((9, 9))
    with kiln.data(to=[X], from_=[D]) as region:
        off((9, 9), kiln.present(X), kiln.present(D), 9, 3, region=region)
    assert np.allclose(D, np.sqrt(((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)))
    with pytest.raises(ValueError):
        off((9, 9), kiln.present(X), kiln.present(D), 9, 3, region=region)  # after the block
    with pytest.raises(kiln.BuildError):
        kiln.Offload(None, "double *x", "x[i] = nope;")
    with pytest.raises(BufferError):
        off((1, 1), kiln.to(X), kiln.from_(b"read-only bytes"), 1, 3)
