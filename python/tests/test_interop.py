import numpy as np
import pytest


def _cpu(kiln):
    return kiln.get_default_queue().device.type == "cpu"


def test_dlpack_from_numpy(kiln, rng):
    if not _cpu(kiln):
        pytest.skip("NumPy DLPack needs a CPU device")
    for shape in [(0,), (1,), (7,), (3, 5), (2, 3, 4)]:
        x = rng.standard_normal(shape)
        a = kiln.from_dlpack(x)
        assert a.shape == shape and np.array_equal(a.get(), x)
    x = np.arange(20.0).reshape(4, 5)[:, ::2]  # strided
    a = kiln.from_dlpack(x)
    assert np.array_equal(a.get(), x)
    s = kiln.from_dlpack(np.array(3.0))
    assert s.shape == () and float(s) == 3.0
    b = kiln.from_dlpack(np.array([True, False]))
    assert b.dtype == np.bool_


def test_dlpack_to_numpy(kiln, rng):
    if not _cpu(kiln):
        pytest.skip("NumPy DLPack needs a CPU device")
    assert kiln.zeros(3).__dlpack_device__() == (1, 0)
    for shape in [(1,), (129,), (3, 5)]:
        x = rng.standard_normal(shape).astype(np.float32)
        a = kiln.asarray(x)
        y = np.from_dlpack(a)
        assert y.shape == shape and np.array_equal(y, x)
    m = kiln.asarray(np.arange(12.0).reshape(3, 4))
    assert np.array_equal(np.from_dlpack(m.T), np.arange(12.0).reshape(3, 4).T)
    # both versions of the protocol
    cap = m.__dlpack__()
    cap2 = m.__dlpack__(max_version=(1, 0))
    assert "dltensor" in repr(cap) and "dltensor_versioned" in repr(cap2)
    del cap, cap2  # unconsumed capsules call their deleters
    with pytest.raises(BufferError):
        m.__dlpack__(dl_device=(2, 0))


def test_dlpack_export_writes_back(kiln):
    if not _cpu(kiln):
        pytest.skip("NumPy DLPack needs a CPU device")
    a = kiln.zeros(16)
    y = np.from_dlpack(a)  # on PoCL: the buffer's own memory, mapped
    y[:] = 3
    del y  # the deleter unmaps: the writes are the array's
    import gc

    gc.collect()
    assert (a.get() == 3).all()
    # import copies host memory (kiln/dlpack.h): the source stays independent
    x = np.zeros(4)
    b = kiln.from_dlpack(x)
    b += 1
    assert (x == 0).all() and (b.get() == 1).all()


def test_from_dlpack_bad_input(kiln):
    with pytest.raises(TypeError):
        kiln.from_dlpack(object())
    with pytest.raises(TypeError):
        kiln.from_dlpack(3)


def test_array_namespace(kiln):
    a = kiln.zeros(3)
    xp = a.__array_namespace__()
    assert xp is kiln
    assert isinstance(xp.sum(a), kiln.Array)


def test_cuda_array_interface(kiln):
    a = kiln.zeros(4)
    if a.queue.device.backend != "cuda":
        assert not hasattr(a, "__cuda_array_interface__")
        return
    cai = a.__cuda_array_interface__
    assert cai["shape"] == (4,) and cai["typestr"] == "<f8" and cai["data"][0] != 0
