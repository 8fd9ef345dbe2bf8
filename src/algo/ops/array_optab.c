/* The table of element-wise functions (issue 42): for each binary and
 * unary op its NumPy name, the dtype kinds the array API standard lets it
 * take, whether its result is bool, and the kernel text of the ops added
 * after the first twelve binary and seven unary ones (whose text stays in
 * array_ops.c, unchanged). The text is NumPy's algorithm where NumPy
 * defines more than C (floor_divide, remainder, logaddexp, shifts), so the
 * tables made by scripts/gen-numpy-tables.py hold bit for bit. */
#include <stdio.h>
#include <string.h>

#include "algo/ops/ops_internal.h"
#include "algo/ops/complex.h"
#include "base/error.h"

enum { K_BOOL = 1, K_INT = 2, K_FLOAT = 4, K_COMPLEX = 8 };
#define K_NUMERIC (K_INT | K_FLOAT | K_COMPLEX)
#define K_REAL (K_INT | K_FLOAT)
#define K_ALL (K_BOOL | K_NUMERIC)

typedef struct op_info {
    const char *name;
    unsigned kinds;
    int bool_result;
} op_info;

static const op_info binary_ops[] = {
    [KILN_OP_ADD] = { "add", K_NUMERIC, 0 },
    [KILN_OP_SUB] = { "subtract", K_NUMERIC, 0 },
    [KILN_OP_MUL] = { "multiply", K_NUMERIC, 0 },
    [KILN_OP_DIV] = { "divide", K_NUMERIC, 0 },
    [KILN_OP_MIN] = { "minimum", K_REAL, 0 },
    [KILN_OP_MAX] = { "maximum", K_REAL, 0 },
    [KILN_OP_EQ] = { "equal", K_ALL, 1 },
    [KILN_OP_NE] = { "not_equal", K_ALL, 1 },
    [KILN_OP_LT] = { "less", K_REAL, 1 },
    [KILN_OP_LE] = { "less_equal", K_REAL, 1 },
    [KILN_OP_GT] = { "greater", K_REAL, 1 },
    [KILN_OP_GE] = { "greater_equal", K_REAL, 1 },
    [KILN_OP_POW] = { "pow", K_NUMERIC, 0 },
    [KILN_OP_FLOOR_DIVIDE] = { "floor_divide", K_REAL, 0 },
    [KILN_OP_REMAINDER] = { "remainder", K_REAL, 0 },
    [KILN_OP_BITWISE_AND] = { "bitwise_and", K_BOOL | K_INT, 0 },
    [KILN_OP_BITWISE_OR] = { "bitwise_or", K_BOOL | K_INT, 0 },
    [KILN_OP_BITWISE_XOR] = { "bitwise_xor", K_BOOL | K_INT, 0 },
    [KILN_OP_LEFT_SHIFT] = { "bitwise_left_shift", K_INT, 0 },
    [KILN_OP_RIGHT_SHIFT] = { "bitwise_right_shift", K_INT, 0 },
    [KILN_OP_LOGICAL_AND] = { "logical_and", K_BOOL, 1 },
    [KILN_OP_LOGICAL_OR] = { "logical_or", K_BOOL, 1 },
    [KILN_OP_LOGICAL_XOR] = { "logical_xor", K_BOOL, 1 },
    [KILN_OP_ATAN2] = { "atan2", K_FLOAT, 0 },
    [KILN_OP_HYPOT] = { "hypot", K_FLOAT, 0 },
    [KILN_OP_COPYSIGN] = { "copysign", K_FLOAT, 0 },
    [KILN_OP_LOGADDEXP] = { "logaddexp", K_FLOAT, 0 },
};

static const op_info unary_ops[] = {
    [KILN_OP_NEG] = { "negative", K_NUMERIC, 0 },
    [KILN_OP_ABS] = { "abs", K_NUMERIC, 0 },
    [KILN_OP_SQRT] = { "sqrt", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_EXP] = { "exp", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_LOG] = { "log", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_SIN] = { "sin", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_COS] = { "cos", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_TAN] = { "tan", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ASIN] = { "asin", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ACOS] = { "acos", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ATAN] = { "atan", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_SINH] = { "sinh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_COSH] = { "cosh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_TANH] = { "tanh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ASINH] = { "asinh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ACOSH] = { "acosh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_ATANH] = { "atanh", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_LOG1P] = { "log1p", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_EXPM1] = { "expm1", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_LOG2] = { "log2", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_LOG10] = { "log10", K_FLOAT | K_COMPLEX, 0 },
    [KILN_OP_FLOOR] = { "floor", K_REAL, 0 },
    [KILN_OP_CEIL] = { "ceil", K_REAL, 0 },
    [KILN_OP_TRUNC] = { "trunc", K_REAL, 0 },
    [KILN_OP_ROUND] = { "round", K_NUMERIC, 0 },
    [KILN_OP_SIGN] = { "sign", K_NUMERIC, 0 },
    [KILN_OP_SQUARE] = { "square", K_NUMERIC, 0 },
    [KILN_OP_POSITIVE] = { "positive", K_NUMERIC, 0 },
    [KILN_OP_BITWISE_INVERT] = { "bitwise_invert", K_BOOL | K_INT, 0 },
    [KILN_OP_LOGICAL_NOT] = { "logical_not", K_BOOL, 1 },
    [KILN_OP_ISNAN] = { "isnan", K_NUMERIC, 1 },
    [KILN_OP_ISINF] = { "isinf", K_NUMERIC, 1 },
    [KILN_OP_ISFINITE] = { "isfinite", K_NUMERIC, 1 },
    [KILN_OP_SIGNBIT] = { "signbit", K_FLOAT, 1 },
};

static const op_info *binary_info(kiln_binary_op op) {
    if ((unsigned)op >= sizeof binary_ops / sizeof binary_ops[0] || !binary_ops[op].name)
        return NULL;
    return &binary_ops[op];
}

static const op_info *unary_info(kiln_unary_op op) {
    if ((unsigned)op >= sizeof unary_ops / sizeof unary_ops[0] || !unary_ops[op].name)
        return NULL;
    return &unary_ops[op];
}

static unsigned kind_bit(kiln_dtype d) {
    switch (kiln__dtype_kind(d)) {
    case 'b':
        return K_BOOL;
    case 'i':
    case 'u':
        return K_INT;
    case 'f':
        return K_FLOAT;
    case 'c':
        return K_COMPLEX;
    }
    return 0;
}

/* "integer and bool" for a kinds mask. */
static const char *kinds_text(unsigned k) {
    static const struct {
        unsigned mask;
        const char *text;
    } texts[] = { { K_NUMERIC, "numeric dtypes (not bool)" },
                  { K_REAL, "real numeric dtypes (integer and real float)" },
                  { K_ALL, "every dtype" },
                  { K_BOOL | K_INT, "integer and bool dtypes" },
                  { K_INT, "integer dtypes" },
                  { K_BOOL, "bool" },
                  { K_FLOAT, "real float dtypes" },
                  { K_FLOAT | K_COMPLEX, "float and complex dtypes" } };
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++)
        if (texts[i].mask == k)
            return texts[i].text;
    return "?";
}

const char *kiln__binary_op_name(kiln_binary_op op) {
    const op_info *i = binary_info(op);
    return i ? i->name : NULL;
}

const char *kiln__unary_op_name(kiln_unary_op op) {
    const op_info *i = unary_info(op);
    return i ? i->name : NULL;
}

int kiln__binary_bool_result(kiln_binary_op op) {
    const op_info *i = binary_info(op);
    return i && i->bool_result;
}

int kiln__unary_bool_result(kiln_unary_op op) {
    const op_info *i = unary_info(op);
    return i && i->bool_result;
}

kiln_dtype kiln_dtype_binary_result(kiln_binary_op op, kiln_dtype a, kiln_dtype b) {
    const op_info *i = binary_info(op);
    kiln_dtype p = kiln_dtype_promote(a, b);
    if (!i || !p || !(i->kinds & kind_bit(p)))
        return (kiln_dtype)0;
    return i->bool_result ? KILN_BOOL : p;
}

kiln_dtype kiln_dtype_unary_result(kiln_unary_op op, kiln_dtype a) {
    const op_info *i = unary_info(op);
    if (!i || !kind_bit(a) || !(i->kinds & kind_bit(a)))
        return (kiln_dtype)0;
    if (i->bool_result)
        return KILN_BOOL;
    return op == KILN_OP_ABS && kiln__is_complex_dtype(a) ? kiln__complex_part_dtype(a) : a;
}

/* KILN_ERROR_INVALID_ARGUMENT for an unknown op or one that does not take
 * dtype d (the promoted dtype of the operands); KILN_OK otherwise. */
static kiln_status check_op(const char *what, const char *kind, const op_info *i, int op,
                            kiln_dtype d) {
    if (!i)
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0, "%s: unknown %s op %d", what, kind,
                               op);
    if (!(i->kinds & kind_bit(d)))
        return kiln__error_set(KILN_ERROR_INVALID_ARGUMENT, 0,
                               "%s: %s does not take %s (it takes %s)", what, i->name,
                               kiln_dtype_name(d), kinds_text(i->kinds));
    return KILN_OK;
}

kiln_status kiln__binary_check(const char *what, kiln_binary_op op, kiln_dtype d) {
    return check_op(what, "binary", binary_info(op), (int)op, d);
}

kiln_status kiln__unary_check(const char *what, kiln_unary_op op, kiln_dtype d) {
    return check_op(what, "unary", unary_info(op), (int)op, d);
}

/* ------------------------------------------------------- kernel text */

/* The unsigned type of the same width as integer compute type t. */
static const char *unsigned_of(kiln_dtype d) {
    static const char *const names[] = { [KILN_INT8] = "uchar",
                                         [KILN_INT16] = "ushort",
                                         [KILN_INT32] = "uint",
                                         [KILN_INT64] = "ulong" };
    unsigned i = (unsigned)d;
    return i < sizeof names / sizeof *names && names[i] ? names[i] : kiln__compute_type(d);
}

/* A float literal suffix for compute type d: "f" for float (a device
 * without fp64 rejects double literals), "" for double. */
static const char *fsfx(kiln_dtype d) {
    return d == KILN_FLOAT64 ? "" : "f";
}

/* Integer a ** b, by squaring and multiplying (NULL for floats: pow). */
static const char *pow_text(char k, const char *t, const char *ut, char *buf, size_t cap) {
    if (k == 'f')
        return NULL;
    /* square and multiply in the unsigned type: wraps, as NumPy */
    snprintf(buf, cap,
             "KILN_FUNC %s kiln_op_pow(%s a, %s b)\n"
             "{\n"
             "%s"
             "    %s r = 1, x = (%s)a, e = (%s)b;\n"
             "    while (e) {\n"
             "        if (e & 1)\n"
             "            r *= x;\n"
             "        x *= x;\n"
             "        e >>= 1;\n"
             "    }\n"
             "    return (%s)r;\n"
             "}\n",
             t, t, t,
             k == 'i' ? "    if (b < 0) /* the integer part of a ** b */\n"
                        "        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;\n"
                      : "",
             ut, ut, ut, t);
    return buf;
}

/* a // b, rounding to minus infinity as NumPy; 0 for an integer
 * divided by 0. */
static const char *floor_divide_text(char k, const char *t, const char *ut, const char *f,
                                     char *buf, size_t cap) {
    if (k == 'f') /* NumPy's npy_floor_divide / npy_divmod */
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_floor_divide(%s a, %s b)\n"
                 "{\n"
                 "    if (b == 0)\n"
                 "        return a / b;\n"
                 "    %s mod = fmod(a, b);\n"
                 "    %s div = (a - mod) / b;\n"
                 "    if (mod != 0 && (b < 0) != (mod < 0))\n"
                 "        div -= 1.0%s;\n"
                 "    if (div == 0)\n"
                 "        return copysign((%s)0, a / b);\n"
                 "    %s fl = floor(div);\n"
                 "    return div - fl > 0.5%s ? fl + 1.0%s : fl;\n"
                 "}\n",
                 t, t, t, t, t, f, t, t, f, f);
    else if (k == 'i')
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_floor_divide(%s a, %s b)\n"
                 "{\n"
                 "    if (b == 0)\n"
                 "        return 0;\n"
                 "    if (b == -1) /* INT_MIN // -1 wraps */\n"
                 "        return (%s)(0 - (%s)a);\n"
                 "    %s q = a / b;\n"
                 "    return (a %% b != 0 && (a < 0) != (b < 0)) ? q - 1 : q;\n"
                 "}\n",
                 t, t, t, t, ut, t);
    else
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_floor_divide(%s a, %s b)\n"
                 "{\n"
                 "    return b == 0 ? 0 : a / b;\n"
                 "}\n",
                 t, t, t);
    return buf;
}

/* a % b with the sign of b (Python's); 0 for an integer divided by 0. */
static const char *remainder_text(char k, const char *t, char *buf, size_t cap) {
    if (k == 'f')
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_remainder(%s a, %s b)\n"
                 "{\n"
                 "    %s mod = fmod(a, b);\n"
                 "    if (b == 0)\n"
                 "        return mod;\n"
                 "    if (mod == 0)\n"
                 "        return copysign((%s)0, b);\n"
                 "    return (b < 0) != (mod < 0) ? mod + b : mod;\n"
                 "}\n",
                 t, t, t, t, t);
    else if (k == 'i')
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_remainder(%s a, %s b)\n"
                 "{\n"
                 "    if (b == 0 || b == -1)\n"
                 "        return 0;\n"
                 "    %s r = a %% b;\n"
                 "    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;\n"
                 "}\n",
                 t, t, t, t);
    else
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_remainder(%s a, %s b)\n"
                 "{\n"
                 "    return b == 0 ? 0 : a %% b;\n"
                 "}\n",
                 t, t, t);
    return buf;
}

const char *kiln__binary_preamble(kiln_binary_op op, kiln_dtype d, char *buf, size_t cap) {
    const char *t = kiln__compute_type(d), *ut = unsigned_of(d), *f = fsfx(d);
    char k = kiln__dtype_kind(d);
    unsigned bits = 8 * (unsigned)kiln_dtype_size(d);
    switch (op) {
    case KILN_OP_POW:
        return pow_text(k, t, ut, buf, cap);
    case KILN_OP_FLOOR_DIVIDE:
        return floor_divide_text(k, t, ut, f, buf, cap);
    case KILN_OP_REMAINDER:
        return remainder_text(k, t, buf, cap);
    case KILN_OP_LEFT_SHIFT:
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_left_shift(%s a, %s b)\n"
                 "{\n"
                 "    return (%sb >= %u) ? 0 : (%s)((%s)a << b);\n"
                 "}\n",
                 t, t, t, k == 'i' ? "b < 0 || " : "", bits, t, ut);
        return buf;
    case KILN_OP_RIGHT_SHIFT:
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_right_shift(%s a, %s b)\n"
                 "{\n"
                 "    return (%sb >= %u) ? %s : (%s)(a >> b);\n"
                 "}\n",
                 t, t, t, k == 'i' ? "b < 0 || " : "", bits, k == 'i' ? "(a < 0 ? -1 : 0)" : "0",
                 t);
        return buf;
    case KILN_OP_LOGADDEXP: /* NumPy's npy_logaddexp */
        snprintf(buf, cap,
                 "KILN_FUNC %s kiln_op_logaddexp(%s x, %s y)\n"
                 "{\n"
                 "    if (x == y) /* infinities of one sign */\n"
                 "        return x + 0.693147180559945309417232121458176568%s;\n"
                 "    %s d = x - y;\n"
                 "    if (d > 0)\n"
                 "        return x + log1p(exp(-d));\n"
                 "    if (d <= 0)\n"
                 "        return y + log1p(exp(d));\n"
                 "    return d; /* a NaN */\n"
                 "}\n",
                 t, t, t, f, t);
        return buf;
    default:
        return NULL;
    }
}

/* The kernel text of an added op on A and B: a call of fn(A, B), or fmt. */
static const struct {
    const char *fn, *fmt;
} binary_ext[] = {
    [KILN_OP_POW] = { "kiln_op_pow", NULL }, /* pow itself for floats */
    [KILN_OP_FLOOR_DIVIDE] = { "kiln_op_floor_divide", NULL },
    [KILN_OP_REMAINDER] = { "kiln_op_remainder", NULL },
    [KILN_OP_LEFT_SHIFT] = { "kiln_op_left_shift", NULL },
    [KILN_OP_RIGHT_SHIFT] = { "kiln_op_right_shift", NULL },
    [KILN_OP_LOGADDEXP] = { "kiln_op_logaddexp", NULL },
    [KILN_OP_ATAN2] = { "atan2", NULL },
    [KILN_OP_HYPOT] = { "hypot", NULL },
    [KILN_OP_COPYSIGN] = { "copysign", NULL },
    [KILN_OP_BITWISE_AND] = { NULL, "(%s) & (%s)" },
    [KILN_OP_BITWISE_OR] = { NULL, "(%s) | (%s)" },
    [KILN_OP_BITWISE_XOR] = { NULL, "(%s) ^ (%s)" },
    [KILN_OP_LOGICAL_AND] = { NULL, "((%s) != 0 && (%s) != 0 ? 1 : 0)" },
    [KILN_OP_LOGICAL_OR] = { NULL, "((%s) != 0 || (%s) != 0 ? 1 : 0)" },
    [KILN_OP_LOGICAL_XOR] = { NULL, "(((%s) != 0) != ((%s) != 0) ? 1 : 0)" },
};

const char *kiln__binary_expr_ext(kiln_binary_op op, kiln_dtype d, const char *A, const char *B,
                                  char *buf, size_t cap) {
    if ((unsigned)op >= sizeof binary_ext / sizeof *binary_ext)
        return NULL;
    const char *fn = binary_ext[op].fn, *fmt = binary_ext[op].fmt;
    if (op == KILN_OP_POW && kiln__dtype_kind(d) == 'f')
        fn = "pow";
    if (fmt)
        snprintf(buf, cap, fmt, A, B);
    else if (fn)
        snprintf(buf, cap, "%s(%s, %s)", fn, A, B);
    else
        return NULL;
    return buf;
}

/* The unary ops after COS on a compute value X of dtype d. */
const char *kiln__unary_expr_ext(kiln_unary_op op, kiln_dtype d, const char *X, char *buf,
                                 size_t cap) {
    /* the ops that apply one function; the rounding ones only to floats
     * (integers are their own floor: "" leaves X as it is) */
    static const struct {
        kiln_unary_op op;
        const char *fn;
        int float_only;
    } plain[] = {
        { KILN_OP_TAN, "tan", 0 },     { KILN_OP_ASIN, "asin", 0 },   { KILN_OP_ACOS, "acos", 0 },
        { KILN_OP_ATAN, "atan", 0 },   { KILN_OP_SINH, "sinh", 0 },   { KILN_OP_COSH, "cosh", 0 },
        { KILN_OP_TANH, "tanh", 0 },   { KILN_OP_ASINH, "asinh", 0 }, { KILN_OP_ACOSH, "acosh", 0 },
        { KILN_OP_ATANH, "atanh", 0 }, { KILN_OP_LOG1P, "log1p", 0 }, { KILN_OP_EXPM1, "expm1", 0 },
        { KILN_OP_LOG2, "log2", 0 },   { KILN_OP_LOG10, "log10", 0 }, { KILN_OP_FLOOR, "floor", 1 },
        { KILN_OP_CEIL, "ceil", 1 },   { KILN_OP_TRUNC, "trunc", 1 }, { KILN_OP_ROUND, "rint", 1 },
        { KILN_OP_POSITIVE, "", 1 },
    };
    char k = kiln__dtype_kind(d);
    const char *t = kiln__compute_type(d);
    for (size_t i = 0; i < sizeof plain / sizeof *plain; i++)
        if (plain[i].op == op) {
            snprintf(buf, cap, "%s(%s)", plain[i].float_only && k != 'f' ? "" : plain[i].fn, X);
            return buf;
        }
    switch (op) {
    case KILN_OP_SIGN:
        if (k == 'f')
            snprintf(buf, cap, "(%s > 0 ? (%s)1 : %s < 0 ? (%s)-1 : %s == 0 ? (%s)0 : %s)", X, t, X,
                     t, X, t, X);
        else if (k == 'i')
            snprintf(buf, cap, "((%s > 0) - (%s < 0))", X, X);
        else
            snprintf(buf, cap, "(%s > 0 ? 1 : 0)", X);
        return buf;
    case KILN_OP_SQUARE:
        if (k == 'f')
            snprintf(buf, cap, "%s * %s", X, X);
        else /* wraps: in the unsigned type */
            snprintf(buf, cap, "(%s)((%s)%s * (%s)%s)", t, unsigned_of(d), X, unsigned_of(d), X);
        return buf;
    case KILN_OP_BITWISE_INVERT:
    case KILN_OP_LOGICAL_NOT:
        if (k == 'b')
            snprintf(buf, cap, "(%s != 0 ? 0 : 1)", X);
        else
            snprintf(buf, cap, "~%s", X);
        return buf;
    case KILN_OP_ISNAN:
    case KILN_OP_ISINF:
    case KILN_OP_ISFINITE:
    case KILN_OP_SIGNBIT:
        if (k != 'f')
            snprintf(buf, cap, "%d", op == KILN_OP_ISFINITE);
        else
            snprintf(buf, cap, "(%s(%s) ? 1 : 0)",
                     op == KILN_OP_ISNAN      ? "isnan"
                     : op == KILN_OP_ISINF    ? "isinf"
                     : op == KILN_OP_ISFINITE ? "isfinite"
                                              : "signbit",
                     X);
        return buf;
    default:
        return NULL;
    }
}
