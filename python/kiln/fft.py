"""kiln.fft: NumPy's signatures and norms over kiln_fft / kiln_rfft /
kiln_irfft (cuFFT, clFFT or FFTW, loaded at run time). Transforms run over
the last axes (axis=-1, axes=(-2, -1), ...); n= / s= must equal the input's
lengths (padding and cropping are not bound yet)."""
import numpy as np

from . import _kiln as _k
from ._array import _np_dtype, asarray, empty

_NORM = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _axes_count(a, axes, name):
    nd = a.ndim
    if axes is None:
        return nd
    ax = sorted(x % nd for x in axes)
    if ax != list(range(nd - len(ax), nd)):
        raise NotImplementedError(f"{name}: only the last axes are bound (got axes={axes})")
    return len(ax)


def _complex(a):
    dt = _np_dtype(a)
    want = np.complex64 if dt in (np.float32, np.float16, np.complex64) else np.complex128
    return a if dt == want else a.astype(want)


def _real(a):
    dt = _np_dtype(a)
    want = np.float32 if dt in (np.float32, np.float16) else np.float64
    return a if dt == want else a.astype(want)


def _check_n(a, n, k, name):
    if n is not None:
        s = (n,) if np.ndim(n) == 0 else tuple(n)
        if s != a.shape[-len(s):]:
            raise NotImplementedError(f"{name}: n/s other than the input's lengths is not bound yet")


def _c2c(x, axes, norm, inverse, name, n=None):
    a = _complex(asarray(x))
    k = _axes_count(a, axes, name)
    _check_n(a, n, k, name)
    out = empty(a.shape, _np_dtype(a), a.queue)
    if a.size:
        _k.fft(0, out, a, k, inverse, _NORM[norm])
    return out


def fft(a, n=None, axis=-1, norm=None):
    return _c2c(a, (axis,), norm, 0, "fft", n)


def ifft(a, n=None, axis=-1, norm=None):
    return _c2c(a, (axis,), norm, 1, "ifft", n)


def fft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c(a, axes, norm, 0, "fft2", s)


def ifft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2c(a, axes, norm, 1, "ifft2", s)


def fftn(a, s=None, axes=None, norm=None):
    return _c2c(a, axes, norm, 0, "fftn", s)


def ifftn(a, s=None, axes=None, norm=None):
    return _c2c(a, axes, norm, 1, "ifftn", s)


def _r2c(x, axes, norm, name, n=None):
    a = _real(asarray(x))
    k = _axes_count(a, axes, name)
    _check_n(a, n, k, name)
    shape = a.shape[:-1] + (a.shape[-1] // 2 + 1,)
    out = empty(shape, np.complex64 if _np_dtype(a) == np.float32 else np.complex128, a.queue)
    _k.fft(1, out, a, k, 0, _NORM[norm])
    return out


def _c2r(x, axes, norm, name, n=None):
    a = _complex(asarray(x))
    k = _axes_count(a, axes, name)
    if n is None:
        last = 2 * (a.shape[-1] - 1)
    else:
        s = (n,) if np.ndim(n) == 0 else tuple(n)
        if s[:-1] != a.shape[-len(s):-1]:
            raise NotImplementedError(f"{name}: s other than the input's lengths is not bound yet")
        last = s[-1]
    shape = a.shape[:-1] + (last,)
    out = empty(shape, np.float32 if _np_dtype(a) == np.complex64 else np.float64, a.queue)
    _k.fft(2, out, a, k, 1, _NORM[norm])
    return out


def rfft(a, n=None, axis=-1, norm=None):
    return _r2c(a, (axis,), norm, "rfft", n)


def irfft(a, n=None, axis=-1, norm=None):
    return _c2r(a, (axis,), norm, "irfft", n)


def rfft2(a, s=None, axes=(-2, -1), norm=None):
    return _r2c(a, axes, norm, "rfft2", s)


def irfft2(a, s=None, axes=(-2, -1), norm=None):
    return _c2r(a, axes, norm, "irfft2", s)


def rfftn(a, s=None, axes=None, norm=None):
    return _r2c(a, axes, norm, "rfftn", s)


def irfftn(a, s=None, axes=None, norm=None):
    return _c2r(a, axes, norm, "irfftn", s)


def fftfreq(n, d=1.0):
    return asarray(np.fft.fftfreq(n, d))


def rfftfreq(n, d=1.0):
    return asarray(np.fft.rfftfreq(n, d))
