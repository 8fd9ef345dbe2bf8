#include "algo/ops/op_names.h"

#include <stddef.h>

/* The binary and unary names live in the op tables (array_optab.c). */
const char *kiln__reduce_op_name(kiln_reduce_op op) {
    static const char *const names[] = { NULL,
                                         "KILN_REDUCE_SUM",
                                         "KILN_REDUCE_PROD",
                                         "KILN_REDUCE_MIN",
                                         "KILN_REDUCE_MAX",
                                         "KILN_REDUCE_NORM1",
                                         "KILN_REDUCE_NORM2",
                                         "KILN_REDUCE_NORM_INF",
                                         "KILN_REDUCE_ARGMIN",
                                         "KILN_REDUCE_ARGMAX",
                                         "KILN_REDUCE_ANY",
                                         "KILN_REDUCE_ALL" };
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : NULL;
}
