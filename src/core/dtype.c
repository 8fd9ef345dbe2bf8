/* dtype helpers and the version string. */
#include "kiln.h"

const char *kiln_version(void) {
    return KILN_VERSION_STRING;
}

size_t kiln_dtype_size(kiln_dtype dtype) {
    switch (dtype) {
    case KILN_BOOL:
    case KILN_INT8:
    case KILN_UINT8:
        return 1;
    case KILN_INT16:
    case KILN_UINT16:
    case KILN_FLOAT16:
        return 2;
    case KILN_INT32:
    case KILN_UINT32:
    case KILN_FLOAT32:
        return 4;
    case KILN_INT64:
    case KILN_UINT64:
    case KILN_FLOAT64:
        return 8;
    case KILN_COMPLEX64:
        return 8;
    case KILN_COMPLEX128:
        return 16;
    }
    return 0;
}

const char *kiln_dtype_name(kiln_dtype dtype) {
    switch (dtype) {
    case KILN_INT8:
        return "char";
    case KILN_UINT8:
        return "uchar";
    case KILN_INT16:
        return "short";
    case KILN_UINT16:
        return "ushort";
    case KILN_INT32:
        return "int";
    case KILN_UINT32:
        return "uint";
    case KILN_INT64:
        return "long";
    case KILN_UINT64:
        return "ulong";
    case KILN_FLOAT16:
        return "half";
    case KILN_FLOAT32:
        return "float";
    case KILN_FLOAT64:
        return "double";
    case KILN_COMPLEX64:
        return "cfloat";
    case KILN_COMPLEX128:
        return "cdouble";
    case KILN_BOOL:
        return "bool";
    }
    return "?";
}
