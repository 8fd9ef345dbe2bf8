"""kiln.fft: NumPy's signatures and norms over kiln_fft_c2c_out / kiln_fft_r2c_out /
kiln_fft_c2r_out (cuFFT, clFFT or FFTW, loaded at run time). Transforms run over
any axes (moved last and back with a copy where they are not the last);
n= / s= crop or zero-pad as NumPy does."""
import numpy as np

from . import _kiln as _k
from ._array import _np_dtype, asarray, concatenate, empty, transpose, zeros

_NORM = {None: 0, "backward": 0, "ortho": 1, "forward": 2}


def _complex(a):
    dt = _np_dtype(a)
    want = np.complex64 if dt in (np.float32, np.float16, np.complex64) else np.complex128
    return a if dt == want else a.astype(want)


def _real(a):
    dt = _np_dtype(a)
    want = np.float32 if dt in (np.float32, np.float16) else np.float64
    return a if dt == want else a.astype(want)


def _resize(a, axis, n, name):
    """a with axis cut or zero-padded to length n (NumPy's n=/s=)."""
    m = a.shape[axis]
    if n < 1:
        raise ValueError(f"{name}: invalid number of data points ({n}) specified")
    if n == m:
        return a
    if n < m:
        idx = [slice(None)] * a.ndim
        idx[axis] = slice(0, n)
        return a[tuple(idx)].copy()
    pad = zeros(a.shape[:axis] + (n - m,) + a.shape[axis + 1:], _np_dtype(a), a.queue)
    return concatenate([a, pad], axis)


def _plan(a, axes, s, name):
    """(a with the transform axes last, k, the permutation to undo)."""
    nd = a.ndim
    if axes is None:
        axes = tuple(range(nd - (len(s) if s is not None else nd), nd))
    axes = tuple(int(x) % nd if nd else 0 for x in axes)
    if len(set(axes)) != len(axes):
        raise ValueError(f"{name}: repeated axes {axes}")
    if s is not None and len(s) != len(axes):
        raise ValueError(f"{name}: s and axes have different lengths")
    order = [i for i in range(nd) if i not in axes] + list(axes)
    if order != list(range(nd)):
        a = transpose(a, order).copy()
    inv = [order.index(i) for i in range(nd)]
    return a, len(axes), inv


def _undo(r, inv):
    return r if inv == list(range(len(inv))) else transpose(r, inv).copy()


def _sizes(n):
    return None if n is None else ((int(n),) if np.ndim(n) == 0 else tuple(int(v) for v in n))


def _c2c(x, axes, norm, inverse, name, n=None):
    a = _complex(asarray(x))
    s = _sizes(n)
    a, k, inv = _plan(a, axes, s, name)
    if s is not None:
        for j, m in enumerate(s):
            a = _resize(a, a.ndim - k + j, m, name)
    out = empty(a.shape, _np_dtype(a), a.queue)
    if a.size:
        _k.fft(0, out, a, k, inverse, _NORM[norm])
    return _undo(out, inv)


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
    s = _sizes(n)
    a, k, inv = _plan(a, axes, s, name)
    if s is not None:
        for j, m in enumerate(s):
            a = _resize(a, a.ndim - k + j, m, name)
    shape = a.shape[:-1] + (a.shape[-1] // 2 + 1,)
    out = empty(shape, np.complex64 if _np_dtype(a) == np.float32 else np.complex128, a.queue)
    if a.size:
        _k.fft(1, out, a, k, 0, _NORM[norm])
    return _undo(out, inv)


def _c2r(x, axes, norm, name, n=None):
    a = _complex(asarray(x))
    s = _sizes(n)
    a, k, inv = _plan(a, axes, s, name)
    if s is None:
        last = 2 * (a.shape[-1] - 1)
    else:
        for j, m in enumerate(s[:-1]):
            a = _resize(a, a.ndim - k + j, m, name)
        last = s[-1]
    if last < 1:
        raise ValueError(f"{name}: invalid number of data points ({last}) specified")
    a = _resize(a, a.ndim - 1, last // 2 + 1, name)
    shape = a.shape[:-1] + (last,)
    out = empty(shape, np.float32 if _np_dtype(a) == np.complex64 else np.float64, a.queue)
    if a.size:
        _k.fft(2, out, a, k, 1, _NORM[norm])
    return _undo(out, inv)


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


def fftfreq(n, d=1.0, device=None, dtype=None):
    """HOST: NumPy's fftfreq, copied to the device."""
    return asarray(np.fft.fftfreq(n, d).astype(dtype or np.float64))


def rfftfreq(n, d=1.0, device=None, dtype=None):
    """HOST: NumPy's rfftfreq, copied to the device."""
    return asarray(np.fft.rfftfreq(n, d).astype(dtype or np.float64))


def fftshift(x, axes=None):
    from ._array_api import roll
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else ((axes,) if np.ndim(axes) == 0 else tuple(axes))
    return roll(x, tuple(x.shape[a] // 2 for a in axes), axis=axes)


def ifftshift(x, axes=None):
    from ._array_api import roll
    x = asarray(x)
    axes = tuple(range(x.ndim)) if axes is None else ((axes,) if np.ndim(axes) == 0 else tuple(axes))
    return roll(x, tuple(-(x.shape[a] // 2) for a in axes), axis=axes)


_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def hfft(a, n=None, axis=-1, norm=None):
    """The FFT of a Hermitian-symmetric signal (NumPy's hfft: irfft of the
    conjugate, the norm's direction swapped)."""
    return _c2r(_k.part(_complex(asarray(a)), 2), (axis,), _SWAP[norm], "hfft", n)


def ihfft(a, n=None, axis=-1, norm=None):
    """The inverse of hfft (NumPy's: the conjugate of rfft, the norm's direction swapped)."""
    return _k.part(_r2c(a, (axis,), _SWAP[norm], "ihfft", n), 2)
