import numpy as np
import pytest


def _skip_without_fft(kiln, fn):
    try:
        return fn()
    except kiln.UnsupportedError as e:
        pytest.skip(f"no FFT library for this device: {e}")


@pytest.mark.parametrize("n", [1, 7, 16, 257])
def test_fft_1d(kiln, rng, n):
    x = rng.standard_normal(n) + 1j * rng.standard_normal(n)
    a = kiln.asarray(x)
    r = _skip_without_fft(kiln, lambda: kiln.fft.fft(a))
    assert r.dtype == np.complex128 and np.allclose(r.get(), np.fft.fft(x))
    for norm in ("backward", "ortho", "forward"):
        assert np.allclose(kiln.fft.ifft(a, norm=norm).get(), np.fft.ifft(x, norm=norm))
    xr = rng.standard_normal(n).astype(np.float32)
    rr = kiln.fft.rfft(kiln.asarray(xr))
    assert rr.dtype == np.complex64 and np.allclose(rr.get(), np.fft.rfft(xr), atol=1e-4)
    if n > 1:
        back = kiln.fft.irfft(rr, n=n)
        assert np.allclose(back.get(), xr, atol=1e-4)


def test_fft_2d_batched(kiln, rng):
    x = rng.standard_normal((3, 8, 6))
    a = kiln.asarray(x)
    r = _skip_without_fft(kiln, lambda: kiln.fft.fft2(a))
    assert np.allclose(r.get(), np.fft.fft2(x))
    assert np.allclose(kiln.fft.fft(a).get(), np.fft.fft(x))
    assert np.allclose(kiln.fft.rfftn(a).get(), np.fft.rfftn(x))
    assert np.allclose(kiln.fft.irfft2(kiln.fft.rfft2(a), s=(8, 6)).get(), x)
    # any axes, n/s cropping and zero padding, Hermitian transforms (NumPy's)
    assert np.allclose(kiln.fft.fft(a, axis=0).get(), np.fft.fft(x, axis=0))
    for n in (1, 5, 12, 17):
        assert np.allclose(kiln.fft.fft(a, n=n).get(), np.fft.fft(x, n=n))
        assert np.allclose(kiln.fft.rfft(a, n=n, axis=1).get(), np.fft.rfft(x, n=n, axis=1))
        assert np.allclose(kiln.fft.irfft(kiln.fft.rfft(a), n=n).get(), np.fft.irfft(np.fft.rfft(x), n=n))
    assert np.allclose(kiln.fft.fftn(a, s=(5, 3), axes=(0, 2)).get(), np.fft.fftn(x, s=(5, 3), axes=(0, 2)))
    z = np.fft.rfft(x)
    assert np.allclose(kiln.fft.hfft(kiln.asarray(z), norm="ortho").get(), np.fft.hfft(z, norm="ortho"))
    assert np.allclose(kiln.fft.ihfft(a, axis=1).get(), np.fft.ihfft(x, axis=1))
    assert np.allclose(kiln.fft.fftshift(a, axes=(1, 2)).get(), np.fft.fftshift(x, axes=(1, 2)))
    assert np.allclose(kiln.fft.ifftshift(a).get(), np.fft.ifftshift(x))
    with pytest.raises(ValueError):
        kiln.fft.fft(a, n=0)
    assert np.allclose(kiln.fft.fftfreq(8).get(), np.fft.fftfreq(8))
