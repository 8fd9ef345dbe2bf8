"""The buffer protocol (memoryview, bytes, np.asarray as a view) on the host
backend's arrays, and BufferError elsewhere."""
import numpy as np
import pytest

DTYPES = [np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64, np.uint64,
          np.float16, np.float32, np.float64, np.complex64, np.complex128, np.bool_]


@pytest.fixture(scope="module")
def host_queue(kiln):
    try:
        dev = kiln.get_device("host:0")
    except kiln.KilnError as e:
        pytest.skip(f"no host backend here: {e}")
    return kiln.Queue(device=dev)


@pytest.mark.parametrize("dtype", DTYPES)
def test_memoryview_matches_numpy(kiln, host_queue, rng, dtype):
    for shape in [(0,), (1,), (7,), (3, 5), (2, 3, 4), (2, 1, 3, 1, 2)]:
        x = (rng.standard_normal(shape) * 50).astype(dtype)
        a = kiln.asarray(x, queue=host_queue)
        m = memoryview(a)
        assert m.shape == x.shape
        assert m.strides == x.strides or x.size == 0  # NumPy gives empty arrays 0 strides
        assert m.itemsize == x.itemsize and m.nbytes == x.nbytes and not m.readonly
        assert np.asarray(m).dtype == x.dtype  # np.dtype() does not parse 'Zf'/'Zd'
        assert m.tobytes() == x.tobytes() and bytes(a) == x.tobytes()
        m.release()


def test_zero_copy_both_ways(kiln, host_queue):
    a = kiln.zeros(1031, np.float32, queue=host_queue)
    v = np.asarray(a)  # through the buffer: a view, no copy
    assert v.shape == (1031,) and v.dtype == np.float32
    v[::2] = 5.0
    want = np.zeros(1031, np.float32)
    want[::2] = 5.0
    assert np.array_equal(a.get(), want)
    a += 1  # device work is seen through the view once it has ended
    host_queue.finish()
    assert np.array_equal(v, want + 1)


def test_strided_and_transposed_views(kiln, host_queue):
    x = np.arange(60, dtype=np.int32).reshape(6, 10)
    a = kiln.asarray(x, queue=host_queue)
    for view, ref in [(a[:, ::3], x[:, ::3]), (a.T, x.T), (a[1:5, 2:9:2], x[1:5, 2:9:2])]:
        m = memoryview(view)
        assert m.shape == ref.shape and m.strides == ref.strides
        assert np.array_equal(np.asarray(m), ref)
        # a consumer that wants contiguous memory (a PyBUF_SIMPLE request)
        # is refused, with the reason
        import binascii

        with pytest.raises(BufferError, match="not C-contiguous"):
            binascii.hexlify(view)
        assert bytes(view) == ref.tobytes()  # bytes() asks for strides and copies


def test_zero_d_and_bool(kiln, host_queue):
    s = kiln.asarray(np.float64(2.5), queue=host_queue)
    m = memoryview(s)
    assert m.ndim == 0 and m.shape == () and m.format == "d" and m.nbytes == 8
    assert np.asarray(m)[()] == 2.5
    b = kiln.asarray(np.array([True, False, True]), queue=host_queue)
    assert memoryview(b).format == "?"
    assert np.array_equal(np.asarray(b), [True, False, True])
    c = kiln.asarray(np.array([1, 2, 3]), queue=host_queue) > 1  # a comparison's bools
    assert np.array_equal(np.asarray(c), [False, True, True])


def test_index_only_for_zero_d_integers(kiln, host_queue):
    # as NumPy: operator.index (and so bytes(n), range(n)) takes 0-d
    # integer arrays only; bytes(a) of any other array is its buffer
    import operator

    assert operator.index(kiln.asarray(np.int64(3), queue=host_queue)) == 3
    for bad in [np.array([3]), np.array([[3]]), np.float32(3.0), np.array(True)]:
        with pytest.raises(TypeError):
            operator.index(kiln.asarray(bad, queue=host_queue))
        with pytest.raises(TypeError):
            operator.index(bad)
    assert bytes(kiln.asarray(np.array([7], np.int16), queue=host_queue)) == b"\x07\x00"


def test_view_outlives_array_reference(kiln, host_queue):
    a = kiln.asarray(np.arange(5.0), queue=host_queue)
    m = memoryview(a)
    del a  # the view holds the array
    import gc

    gc.collect()
    assert m.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]
    m.release()


def test_closed_queue_refused(kiln):
    try:
        dev = kiln.get_device("host:0")
    except kiln.KilnError as e:
        pytest.skip(f"no host backend here: {e}")
    q = kiln.Queue(device=dev)
    a = kiln.zeros(4, queue=q)
    q.close()
    with pytest.raises(ValueError, match="closed"):
        memoryview(a)


def test_other_devices_refuse(kiln):
    q = kiln.get_default_queue()
    if q.device.info()["id"].startswith("host"):
        pytest.skip("the default device is the host backend")
    a = kiln.zeros(4, queue=q)
    with pytest.raises(BufferError, match="only the host backend"):
        memoryview(a)
    # NumPy falls back to __array__: a copy, as before
    assert np.array_equal(np.asarray(a), np.zeros(4))
