#include "algo/op_names.h"

#include <stddef.h>

const char *kiln__binary_op_name(kiln_binary_op op) {
    static const char *const names[] = { NULL,          "KILN_OP_ADD", "KILN_OP_SUB", "KILN_OP_MUL",
                                         "KILN_OP_DIV", "KILN_OP_MIN", "KILN_OP_MAX", "KILN_OP_EQ",
                                         "KILN_OP_NE",  "KILN_OP_LT",  "KILN_OP_LE",  "KILN_OP_GT",
                                         "KILN_OP_GE" };
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : NULL;
}

const char *kiln__unary_op_name(kiln_unary_op op) {
    static const char *const names[] = { NULL,           "KILN_OP_NEG", "KILN_OP_ABS",
                                         "KILN_OP_SQRT", "KILN_OP_EXP", "KILN_OP_LOG",
                                         "KILN_OP_SIN",  "KILN_OP_COS" };
    return (unsigned)op < sizeof names / sizeof names[0] ? names[op] : NULL;
}

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
