"""DLPack with CuPy and PyTorch on a CUDA device (the GPU machine; skipped
where neither is installed or the device is not a CUDA one). Zero copy
both ways: a write through one side is seen by the other."""
import numpy as np
import pytest


def _cuda(kiln):
    q = kiln.get_default_queue()
    if "cuda" not in str(q.device).lower():
        pytest.skip(f"not a CUDA device: {q.device}")
    return q


def _peer_sync(mod, lib):
    if lib == "cupy":
        mod.cuda.runtime.deviceSynchronize()
    else:
        mod.cuda.synchronize()


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_dlpack_with_gpu_peers(kiln, rng, lib):
    _cuda(kiln)
    mod = pytest.importorskip(lib)
    for shape in [(1,), (257,), (3, 5), (2, 3, 4)]:
        x = rng.standard_normal(shape).astype(np.float32)
        a = kiln.asarray(x)
        t = mod.from_dlpack(a)  # kiln -> peer, no copy
        got = t.get() if lib == "cupy" else t.cpu().numpy()
        assert got.shape == shape and np.array_equal(got, x)
        t *= 2  # the peer writes kiln's memory, on its own stream:
        _peer_sync(mod, lib)  # DLPack orders the exchange, not later writes
        kiln.finish()
        assert np.array_equal(a.get(), 2 * x)
        b = kiln.from_dlpack(t)  # peer -> kiln
        assert b.shape == shape and np.array_equal(b.get(), 2 * x)
        c = b + b  # kiln computes on the peer's memory
        assert np.array_equal(c.get(), 4 * x)


@pytest.mark.parametrize("lib", ["cupy", "torch"])
def test_cuda_array_interface_with_gpu_peers(kiln, rng, lib):
    _cuda(kiln)
    mod = pytest.importorskip(lib)
    x = rng.standard_normal((33, 7)).astype(np.float32)
    a = kiln.asarray(x)
    for view, ref in [(a, x), (a.T, x.T), (a[::2, 1:], x[::2, 1:])]:
        cai = view.__cuda_array_interface__
        assert cai["version"] == 3 and tuple(cai["shape"]) == ref.shape
        # the peer wraps kiln's memory through the interface: no copy
        t = mod.asarray(view) if lib == "cupy" else mod.as_tensor(view, device="cuda")
        got = t.get() if lib == "cupy" else t.cpu().numpy()
        assert np.array_equal(got, ref)
    t = mod.asarray(a) if lib == "cupy" else mod.as_tensor(a, device="cuda")
    t *= 3
    _peer_sync(mod, lib)
    kiln.finish()
    assert np.array_equal(a.get(), 3 * x)
