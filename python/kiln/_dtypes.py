"""kiln dtypes <-> NumPy dtypes."""
import numpy as np

from . import _kiln as _k

_PAIRS = [
    (np.int8, _k.KILN_INT8, "char"),
    (np.uint8, _k.KILN_UINT8, "uchar"),
    (np.int16, _k.KILN_INT16, "short"),
    (np.uint16, _k.KILN_UINT16, "ushort"),
    (np.int32, _k.KILN_INT32, "int"),
    (np.uint32, _k.KILN_UINT32, "uint"),
    (np.int64, _k.KILN_INT64, "long"),
    (np.uint64, _k.KILN_UINT64, "ulong"),
    (np.float16, _k.KILN_FLOAT16, "half"),
    (np.float32, _k.KILN_FLOAT32, "float"),
    (np.float64, _k.KILN_FLOAT64, "double"),
    (np.complex64, _k.KILN_COMPLEX64, "cfloat"),
    (np.complex128, _k.KILN_COMPLEX128, "cdouble"),
]

TO_CODE = {np.dtype(t): c for t, c, _ in _PAIRS}
FROM_CODE = {c: np.dtype(t) for t, c, _ in _PAIRS}
C_NAME = {np.dtype(t): n for t, _, n in _PAIRS}
BOOL = np.dtype(np.bool_)
# The C library's bool dtype (KILN_BOOL): results of any/all, isnan and
# other bool-result ops read as NumPy bool; this package makes its bool
# arrays (comparisons, NumPy bool data) as KILN_BOOL too.
KILN_BOOL_CODE = getattr(_k, "KILN_BOOL", 14)
FROM_CODE[KILN_BOOL_CODE] = BOOL

# C type names in kernel signatures -> dtype (scalar arguments)
C_TYPES = {
    "char": np.int8, "signed char": np.int8, "int8_t": np.int8,
    "uchar": np.uint8, "unsigned char": np.uint8, "uint8_t": np.uint8, "bool": np.uint8,
    "short": np.int16, "int16_t": np.int16,
    "ushort": np.uint16, "unsigned short": np.uint16, "uint16_t": np.uint16,
    "int": np.int32, "int32_t": np.int32, "signed int": np.int32,
    "uint": np.uint32, "unsigned int": np.uint32, "unsigned": np.uint32, "uint32_t": np.uint32,
    "long": np.int64, "int64_t": np.int64, "long long": np.int64,
    "ulong": np.uint64, "unsigned long": np.uint64, "uint64_t": np.uint64,
    "half": np.float16, "float": np.float32, "double": np.float64,
    "cfloat": np.complex64, "cdouble": np.complex128,
}


def code_of(dtype):
    """kiln_dtype of a NumPy dtype-like (bool: KILN_BOOL)."""
    dt = np.dtype(dtype)
    if dt == BOOL:
        return KILN_BOOL_CODE
    try:
        return TO_CODE[dt.newbyteorder("=")] if dt.byteorder not in "=|" else TO_CODE[dt]
    except KeyError:
        raise TypeError(f"kiln has no dtype {dt}") from None


def ctype_dtype(ctype):
    """The dtype of a C scalar type name, or None."""
    t = " ".join(ctype.replace("const", " ").replace("volatile", " ").split())
    d = C_TYPES.get(t)
    return np.dtype(d) if d is not None else None
