/* dtype helpers and the version string. */
#include "kiln.h"

const char *kiln_version(void) {
    return KILN_VERSION_STRING;
}

size_t kiln_dtype_size(kiln_dtype dtype) {
    static const unsigned char sizes[] = {
        [KILN_BOOL] = 1,      [KILN_INT8] = 1,       [KILN_UINT8] = 1,  [KILN_INT16] = 2,
        [KILN_UINT16] = 2,    [KILN_FLOAT16] = 2,    [KILN_INT32] = 4,  [KILN_UINT32] = 4,
        [KILN_FLOAT32] = 4,   [KILN_INT64] = 8,      [KILN_UINT64] = 8, [KILN_FLOAT64] = 8,
        [KILN_COMPLEX64] = 8, [KILN_COMPLEX128] = 16
    };
    unsigned i = (unsigned)dtype;
    return i < sizeof sizes ? sizes[i] : 0;
}

const char *kiln_dtype_name(kiln_dtype dtype) {
    static const char *const names[] = {
        [KILN_INT8] = "char",          [KILN_UINT8] = "uchar",    [KILN_INT16] = "short",
        [KILN_UINT16] = "ushort",      [KILN_INT32] = "int",      [KILN_UINT32] = "uint",
        [KILN_INT64] = "long",         [KILN_UINT64] = "ulong",   [KILN_FLOAT16] = "half",
        [KILN_FLOAT32] = "float",      [KILN_FLOAT64] = "double", [KILN_COMPLEX64] = "cfloat",
        [KILN_COMPLEX128] = "cdouble", [KILN_BOOL] = "bool"
    };
    unsigned i = (unsigned)dtype;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : "?";
}
