/* The dtype side of the array API (issue 42, items 2-3; issue 41, item 5),
 * against tables NumPy made (tests/numpy_tables.h, written by
 * scripts/gen-numpy-tables.py; the NumPy version is printed):
 *   - kiln_dtype_promote for every pair of the 14 dtypes, bool and complex
 *     included, and kiln_dtype_promote_scalar (NEP 50's weak Python scalars);
 *   - kiln_dtype_binary_result / kiln_dtype_unary_result for every op and
 *     dtype, and INVALID_ARGUMENT (naming op and dtype) where the array API
 *     standard does not let an op take a dtype;
 *   - every element-wise function on every dtype it takes, at awkward
 *     values (NaN, +-inf, +-0, INT_MIN, -1, the extremes, shift counts
 *     around the width): bit for bit, or within a few ulps for the libm
 *     functions (special values still exact, zeros with their sign);
 *   - the bool dtype: astype to and from it, where and masks with it,
 *     any/all over it, comparisons into it.
 * argv[1] limits the element-wise part to the operand dtypes of one
 * group: "bool" (the default; with the other checks), "int" or "float"
 * (CMake runs the three as tests side by side), or "all". */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"
#include "numpy_tables.h"

static const struct {
    const char *np;
    kiln_dtype d;
} names[] = {
    { "bool", KILN_BOOL },           { "int8", KILN_INT8 },
    { "uint8", KILN_UINT8 },         { "int16", KILN_INT16 },
    { "uint16", KILN_UINT16 },       { "int32", KILN_INT32 },
    { "uint32", KILN_UINT32 },       { "int64", KILN_INT64 },
    { "uint64", KILN_UINT64 },       { "float16", KILN_FLOAT16 },
    { "float32", KILN_FLOAT32 },     { "float64", KILN_FLOAT64 },
    { "complex64", KILN_COMPLEX64 }, { "complex128", KILN_COMPLEX128 },
};
enum { NNAMES = sizeof names / sizeof names[0] };

static kiln_dtype dtype_of(const char *np) {
    for (size_t k = 0; k < NNAMES; k++)
        if (!strcmp(names[k].np, np))
            return names[k].d;
    return (kiln_dtype)0;
}

static const char *np_name(kiln_dtype d) {
    for (size_t k = 0; k < NNAMES; k++)
        if (names[k].d == d)
            return names[k].np;
    return "?";
}

static void test_promote(void) {
    size_t n = sizeof np_promote / sizeof np_promote[0], bad = 0;
    CHECK(n == NNAMES * NNAMES);
    for (size_t k = 0; k < n; k++) {
        kiln_dtype a = dtype_of(np_promote[k].a), b = dtype_of(np_promote[k].b);
        kiln_dtype want = dtype_of(np_promote[k].r), got = kiln_dtype_promote(a, b);
        if (got != want && bad++ < 10)
            CHECK_MSG(0, "promote_types(%s, %s): kiln %s, NumPy %s", np_promote[k].a,
                      np_promote[k].b, np_name(got), np_promote[k].r);
    }
    CHECK_MSG(bad == 0, "%zu of %zu promotions differ from NumPy's", bad, n);
    size_t nw = sizeof np_weak / sizeof np_weak[0];
    bad = 0;
    for (size_t k = 0; k < nw; k++) {
        kiln_dtype a = dtype_of(np_weak[k].a);
        kiln_dtype s = np_weak[k].s == 'b'   ? KILN_BOOL
                       : np_weak[k].s == 'i' ? KILN_INT64
                       : np_weak[k].s == 'f' ? KILN_FLOAT64
                                             : KILN_COMPLEX128;
        kiln_dtype want = dtype_of(np_weak[k].r), got = kiln_dtype_promote_scalar(a, s);
        if (got != want && bad++ < 10)
            CHECK_MSG(0, "result_type(%s array, Python %c): kiln %s, NumPy %s", np_weak[k].a,
                      np_weak[k].s, np_name(got), np_weak[k].r);
        /* the scalar's kind counts, not its width */
        kiln_dtype s2 = s == KILN_INT64        ? KILN_UINT8
                        : s == KILN_FLOAT64    ? KILN_FLOAT16
                        : s == KILN_COMPLEX128 ? KILN_COMPLEX64
                                               : s;
        CHECK(kiln_dtype_promote_scalar(a, s2) == got);
    }
    CHECK_MSG(bad == 0, "%zu of %zu weak-scalar promotions differ from NumPy's", bad, nw);
    CHECK(kiln_dtype_promote((kiln_dtype)0, KILN_BOOL) == 0);
    CHECK(kiln_dtype_promote(KILN_BOOL, (kiln_dtype)15) == 0);
    CHECK(kiln_dtype_promote_scalar((kiln_dtype)0, KILN_INT64) == 0);
    CHECK(kiln_dtype_promote_scalar(KILN_INT8, (kiln_dtype)99) == 0);
    CHECK(kiln_dtype_size(KILN_BOOL) == 1 && !strcmp(kiln_dtype_name(KILN_BOOL), "bool"));
}

/* The op dtypes of the tables (every dtype the element-wise part runs). */
static const char *const op_dtypes[] = { "bool",    "int8",    "uint8",    "int32",
                                         "uint32",  "int64",   "uint64",   "float16",
                                         "float32", "float64", "complex64" };
enum { NOPD = sizeof op_dtypes / sizeof op_dtypes[0] };

static int is_float(kiln_dtype d);

/* kiln's one op beyond the tables: divide on integers is C's division
 * (truncated; by 0: 0), not NumPy's true division into float64 (docs). */
static int int_divide(const char *name, const char *dt) {
    kiln_dtype d = dtype_of(dt);
    if (d == KILN_COMPLEX64) /* kiln has these for complex; NumPy's special
                                values differ (Smith's division, cexp) */
        return !strcmp(name, "divide") || !strcmp(name, "exp");
    return !strcmp(name, "divide") && d != KILN_BOOL && !is_float(d);
}

static const np_case *find_case(const char *name, int arity, const char *dt) {
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++)
        if (!strcmp(np_cases[k].name, name) && np_cases[k].arity == arity &&
            !strcmp(np_cases[k].dtype, dt))
            return &np_cases[k];
    return NULL;
}

/* kiln_*_result_dtype agree with the tables, for every op: a dtype the
 * table has no case for is one the op does not take. */
static void test_result_dtypes(void) {
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++) {
        const np_case *c = &np_cases[k];
        kiln_dtype d = dtype_of(c->dtype), want = dtype_of(c->out_dtype);
        kiln_dtype got = c->arity == 2 ? kiln_dtype_binary_result((kiln_binary_op)c->op, d, d)
                                       : kiln_dtype_unary_result((kiln_unary_op)c->op, d);
        CHECK_MSG(got == want, "%s(%s): result dtype %s, NumPy %s", c->name, c->dtype, np_name(got),
                  c->out_dtype);
    }
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++) {
        const np_case *c = &np_cases[k];
        if (strcmp(c->dtype, "float32"))
            continue; /* every op has a float32 case, or an int32 or bool one */
    }
    /* ops of the tables over dtypes without a case: refused */
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++) {
        const np_case *c = &np_cases[k];
        if (k && !strcmp(np_cases[k - 1].name, c->name))
            continue; /* once per op */
        for (size_t j = 0; j < NOPD; j++) {
            kiln_dtype d = dtype_of(op_dtypes[j]);
            if (int_divide(c->name, op_dtypes[j]) && c->arity == 2)
                CHECK(kiln_dtype_binary_result(KILN_OP_DIV, d, d) == d);
            if (find_case(c->name, c->arity, op_dtypes[j]) || int_divide(c->name, op_dtypes[j]))
                continue;
            kiln_dtype got = c->arity == 2 ? kiln_dtype_binary_result((kiln_binary_op)c->op, d, d)
                                           : kiln_dtype_unary_result((kiln_unary_op)c->op, d);
            CHECK_MSG(got == 0, "%s(%s) should be refused, gives %s", c->name, op_dtypes[j],
                      np_name(got));
        }
    }
    CHECK(kiln_dtype_binary_result((kiln_binary_op)0, KILN_INT8, KILN_INT8) == 0);
    CHECK(kiln_dtype_binary_result((kiln_binary_op)99, KILN_INT8, KILN_INT8) == 0);
    CHECK(kiln_dtype_unary_result((kiln_unary_op)99, KILN_INT8) == 0);
    CHECK(kiln_dtype_binary_result(KILN_OP_ADD, KILN_BOOL, KILN_INT8) == KILN_INT8);
    CHECK(kiln_dtype_binary_result(KILN_OP_LT, KILN_UINT8, KILN_INT8) == KILN_BOOL);
    CHECK(kiln_dtype_binary_result(KILN_OP_ADD, KILN_COMPLEX64, KILN_COMPLEX64) == KILN_COMPLEX64);
    CHECK(kiln_dtype_binary_result(KILN_OP_LT, KILN_COMPLEX64, KILN_COMPLEX64) == 0);
    CHECK(kiln_dtype_unary_result(KILN_OP_ABS, KILN_COMPLEX128) == KILN_FLOAT64);
}

/* ------------------------------------------------------------ values */

static double f16_to_double(uint16_t h) {
    int e = (h >> 10) & 31, m = h & 1023;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

static double as_double(kiln_dtype d, uint64_t bits) {
    if (d == KILN_FLOAT16)
        return f16_to_double((uint16_t)bits);
    if (d == KILN_FLOAT32) {
        uint32_t u = (uint32_t)bits;
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    double x;
    memcpy(&x, &bits, 8);
    return x;
}

static void put_bits(void *p, size_t i, size_t es, uint64_t bits) {
    switch (es) {
    case 1:
        ((uint8_t *)p)[i] = (uint8_t)bits;
        break;
    case 2:
        ((uint16_t *)p)[i] = (uint16_t)bits;
        break;
    case 4:
        ((uint32_t *)p)[i] = (uint32_t)bits;
        break;
    default:
        ((uint64_t *)p)[i] = bits;
    }
}

static uint64_t get_bits(const void *p, size_t i, size_t es) {
    switch (es) {
    case 1:
        return ((const uint8_t *)p)[i];
    case 2:
        return ((const uint16_t *)p)[i];
    case 4:
        return ((const uint32_t *)p)[i];
    default:
        return ((const uint64_t *)p)[i];
    }
}

static int is_float(kiln_dtype d) {
    return d == KILN_FLOAT16 || d == KILN_FLOAT32 || d == KILN_FLOAT64;
}

/* The value of bits of dtype d, for messages. */
static double show(kiln_dtype d, uint64_t bits) {
    if (is_float(d))
        return as_double(d, bits);
    size_t es = kiln_dtype_size(d);
    int sgn = d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64;
    if (sgn && es < 8 && (bits >> (8 * es - 1)) & 1)
        return (double)(int64_t)(bits | ~((1ull << (8 * es)) - 1));
    return sgn ? (double)(int64_t)bits : (double)bits;
}

/* The bits of a non-negative float as an integer that counts ulps (the
 * sign is compared apart). */
static int64_t ordered(kiln_dtype d, uint64_t bits) {
    uint64_t mag = d == KILN_FLOAT16   ? (bits & 0x7fff)
                   : d == KILN_FLOAT32 ? (bits & 0x7fffffffu)
                                       : (bits & 0x7fffffffffffffffull);
    return (int64_t)mag;
}

/* Whether kiln's got matches NumPy's want (bits of dtype d). */
/* complex64 pow, exp(b log a): a part may be the small remainder of a
 * cancellation, so it is checked against the result's magnitude (64 eps:
 * the table's exponents magnify log's error about tenfold); where the
 * result overflows, the infinite parts' signs follow a phase computed to
 * float precision, so only which parts are infinite must agree. */
static int same_cpow(uint64_t got, uint64_t want) {
    float g[2], w[2];
    uint32_t gb[2] = { (uint32_t)got, (uint32_t)(got >> 32) };
    uint32_t wb[2] = { (uint32_t)want, (uint32_t)(want >> 32) };
    memcpy(g, gb, sizeof g);
    memcpy(w, wb, sizeof w);
    if (isinf(w[0]) || isinf(w[1]))
        return !!isinf(g[0]) == !!isinf(w[0]) && !!isinf(g[1]) == !!isinf(w[1]);
    double mag = hypot(w[0], w[1]);
    for (int k = 0; k < 2; k++)
        if (isnan(w[k]) != isnan(g[k]) ||
            (!isnan(w[k]) && !(fabs((double)g[k] - w[k]) <= 64 * 1.1920928955078125e-7 * mag)))
            return 0;
    return 1;
}

static int same_value(const np_case *c, kiln_dtype d, uint64_t got, uint64_t want) {
    if (got == want)
        return 1;
    if (d == KILN_COMPLEX64) { /* each part as a float32 */
        if (same_value(c, KILN_FLOAT32, got & 0xffffffffu, want & 0xffffffffu) &&
            same_value(c, KILN_FLOAT32, got >> 32, want >> 32))
            return 1;
        return c->approx && c->op == KILN_OP_POW && c->arity == 2 && same_cpow(got, want);
    }
    if (!is_float(d))
        return 0;
    double g = as_double(d, got), w = as_double(d, want);
    if (isnan(w) || isnan(g))
        return isnan(w) && isnan(g); /* any NaN: NumPy does not fix its bits */
    /* maximum/minimum of +0 and -0: the standard leaves the zero's sign */
    if (w == 0 && g == 0 && (c->op == KILN_OP_MIN || c->op == KILN_OP_MAX) && c->arity == 2)
        return 1;
    if (!c->approx || isinf(w) || isinf(g) || (w == 0 && g == 0))
        return 0; /* special values and zeros (their sign too) are exact */
    /* a libm function: within a few ulps (OpenCL allows up to 16 for
     * pow in float; a float16 result is rounded once from float) */
    int64_t maxulps = d == KILN_FLOAT16 ? 2 : 16;
    return (g < 0) == (w < 0) && llabs((long long)(ordered(d, got) - ordered(d, want))) <= maxulps;
}

static int group_of(const char *dt) {
    kiln_dtype d = dtype_of(dt);
    return d == KILN_BOOL ? 'b' : is_float(d) || d == KILN_COMPLEX64 ? 'f' : 'i';
}

static size_t compare(const np_case *c, const unsigned char *hz, const char *how);

/* Runs one table case; returns the number of mismatches. */
static size_t run_case(kiln_queue *q, const np_case *c) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_dtype d = dtype_of(c->dtype), od = dtype_of(c->out_dtype);
    size_t n = c->nvals, total = c->arity == 2 ? n * n : n;
    size_t es = kiln_dtype_size(d), oes = kiln_dtype_size(od);
    unsigned char *ha = malloc(total * es), *hb = malloc(total * es), *hz = malloc(total * oes);
    for (size_t i = 0; i < total; i++) {
        put_bits(ha, i, es, c->arity == 2 ? c->vals[i / n] : c->vals[i]);
        put_bits(hb, i, es, c->vals[i % n]);
    }
    kiln_array *a = NULL, *b = NULL, *z = NULL;
    size_t bad = 0;
    int ok = CHECK_OK(kiln_array_from_host(ctx, d, 1, &total, ha, &a)) &&
             CHECK_OK(kiln_array_from_host(ctx, d, 1, &total, hb, &b)) &&
             CHECK_OK(kiln_array_empty(ctx, od, 1, &total, &z));
    kiln_status st = KILN_OK;
    if (ok) {
        st = c->arity == 2 ? kiln_array_binary_out(q, (kiln_binary_op)c->op, z, a, b, 0, NULL, NULL)
                           : kiln_array_unary_out(q, (kiln_unary_op)c->op, z, a, 0, NULL, NULL);
        CHECK_MSG(st == KILN_OK, "%s(%s): %s", c->name, c->dtype, kiln_last_error_message());
        ok = st == KILN_OK && CHECK_OK(kiln_array_read(q, z, hz));
    }
    if (ok)
        bad = compare(c, hz, "kiln_array_*");
    KT_RELEASE(a, b, z);
    KT_FREE(ha, hb, hz);
    return ok ? bad : 1;
}

/* Compares kiln's results hz (total elements of the case's out dtype)
 * with the table; returns the number of mismatches. */
static size_t compare(const np_case *c, const unsigned char *hz, const char *how) {
    kiln_dtype d = dtype_of(c->dtype), od = dtype_of(c->out_dtype);
    size_t n = c->nvals, total = c->arity == 2 ? n * n : n, oes = kiln_dtype_size(od), bad = 0;
    for (size_t i = 0; i < total; i++) {
        uint64_t g = get_bits(hz, i, oes), w = c->z[i];
        if (same_value(c, od, g, w) || bad++ >= 4)
            continue;
        if (c->arity == 2)
            CHECK_MSG(0, "%s %s(%s): (%.17g, %.17g) -> kiln %.17g (0x%llx), NumPy %.17g (0x%llx)",
                      how, c->name, c->dtype, show(d, c->vals[i / n]), show(d, c->vals[i % n]),
                      show(od, g), (unsigned long long)g, show(od, w), (unsigned long long)w);
        else
            CHECK_MSG(0, "%s %s(%s): %.17g -> kiln %.17g (0x%llx), NumPy %.17g (0x%llx)", how,
                      c->name, c->dtype, show(d, c->vals[i]), show(od, g), (unsigned long long)g,
                      show(od, w), (unsigned long long)w);
    }
    return bad;
}

enum { MAXFUSE = 64 };

/* The cases of operand dtype d, arity and out dtype od, all in one kernel
 * made of the texts kiln_array_binary_out / kiln_array_unary_out generate
 * (kiln__binary_text, kiln__unary_text): case k writes z[k*n + i]. One
 * build for up to ~35 ops, where one kernel per op and dtype would be
 * ~600 builds. Returns the number of failed cases. */
static size_t run_fused(kiln_queue *q, kiln_dtype d, int arity, kiln_dtype od, size_t *ran) {
    const np_case *cs[MAXFUSE];
    size_t k = 0;
    for (size_t j = 0; j < sizeof np_cases / sizeof np_cases[0] && k < MAXFUSE; j++)
        if (dtype_of(np_cases[j].dtype) == d && np_cases[j].arity == arity &&
            dtype_of(np_cases[j].out_dtype) == od)
            cs[k++] = &np_cases[j];
    if (!k)
        return 0;
    size_t n = cs[0]->nvals, total = arity == 2 ? n * n : n;
    size_t es = kiln_dtype_size(d), oes = kiln_dtype_size(od);
    size_t cap = 64 * 1024;
    char *opt = calloc(1, cap), *pre = calloc(1, cap), args[128], one[1200], pbuf[1024];
    const char *ot = kiln__bits_type(od);
    size_t at = 0, pat = 0;
    int ok = 1;
    for (size_t j = 0; j < k; j++) {
        const char *p = NULL;
        int made = arity == 2
                       ? kiln__binary_text((kiln_binary_op)cs[j]->op, d, d, od, args, sizeof args,
                                           one, sizeof one, pbuf, sizeof pbuf, &p)
                       : kiln__unary_text((kiln_unary_op)cs[j]->op, d, od, args, sizeof args, one,
                                          sizeof one);
        CHECK_MSG(made, "no text for %s(%s)", cs[j]->name, cs[j]->dtype);
        ok &= made;
        at += (size_t)snprintf(opt + at, cap - at,
                               "{ KILN_GLOBAL %s *kiln_z%zu = z + %zu * n;\n"
                               "  { KILN_GLOBAL %s *z = kiln_z%zu; %s; } }\n",
                               ot, j, j, ot, j, one);
        if (p)
            pat += (size_t)snprintf(pre + pat, cap - pat, "%s", p);
    }
    kiln_context *ctx = kiln_queue_context(q);
    unsigned char *hx = malloc(total * es), *hy = malloc(total * es), *hz = malloc(k * total * oes);
    for (size_t i = 0; i < total; i++) {
        put_bits(hx, i, es, arity == 2 ? cs[0]->vals[i / n] : cs[0]->vals[i]);
        put_bits(hy, i, es, cs[0]->vals[i % n]);
    }
    size_t zn = k * total;
    kiln_array *x = NULL, *y = NULL, *z = NULL;
    kiln_elementwise *ew = NULL;
    /* the arrays' elements as the kernels take them (float16 as ushort,
     * bool as uchar) */
    snprintf(args, sizeof args,
             arity == 2 ? "const %s *x, const %s *y, %s *z" : "const %s *x, %s *z",
             kiln__bits_type(d), arity == 2 ? kiln__bits_type(d) : ot, ot);
    kiln_elementwise_desc desc =
        KILN_ELEMENTWISE_DESC(.arguments = args, .operation = opt, .preamble = pat ? pre : NULL,
                              .flags = KILN_ELEMENTWISE_ANY_SHAPE, .name = "kiln_np_table");
    ok = ok && CHECK_OK(kiln_array_from_host(ctx, d, 1, &total, hx, &x)) &&
         CHECK_OK(kiln_array_from_host(ctx, d, 1, &total, hy, &y)) &&
         CHECK_OK(kiln_array_empty(ctx, od, 1, &zn, &z));
    if (ok) {
        kiln_status st = kiln_elementwise_create(ctx, &desc, &ew);
        CHECK_MSG(st == KILN_OK, "fused %s %s: %s\n%s", kiln_dtype_name(d),
                  arity == 2 ? "binary" : "unary", kiln_last_error_message(),
                  kiln_last_build_log());
        ok = st == KILN_OK;
    }
    if (ok) {
        kiln_arg v2[3] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y), KILN_ARG_ARRAY(z) };
        kiln_arg v1[2] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(z) };
        ok = CHECK_OK(kiln_elementwise_launch(q, ew, total, arity == 2 ? 3 : 2,
                                              arity == 2 ? v2 : v1, 0, NULL, NULL)) &&
             CHECK_OK(kiln_array_read(q, z, hz));
    }
    size_t failed = ok ? 0 : k;
    for (size_t j = 0; ok && j < k; j++) {
        size_t bad = compare(cs[j], hz + j * total * oes, "fused");
        CHECK_MSG(bad == 0, "%s(%s): %zu results differ from NumPy %s", cs[j]->name, cs[j]->dtype,
                  bad, NP_TABLES_NUMPY_VERSION);
        failed += bad != 0;
    }
    *ran += k;
    KT_RELEASE(ew, x, y, z);
    KT_FREE(hx, hy, hz, opt, pre);
    return failed;
}

/* Every case of one group on q: every case in fused kernels, and each op
 * once through kiln_array_binary_out / kiln_array_unary_out (on the dtype that
 * turns come to: op k on its (k mod cases)-th dtype), or every case that
 * way with all. */
static void run_cases(kiln_queue *q, int group, int all, int fp64) {
    size_t ran = 0, failed = 0, fused = 0;
    for (size_t j = 0; j < NOPD; j++) {
        kiln_dtype d = dtype_of(op_dtypes[j]);
        if ((group && group_of(op_dtypes[j]) != group) || (!fp64 && d == KILN_FLOAT64) ||
            d == KILN_COMPLEX64) /* complex: its own texts (complex.c), run below */
            continue;
        for (int arity = 1; arity <= 2; arity++) {
            failed += run_fused(q, d, arity, d, &fused);
            if (d != KILN_BOOL)
                failed += run_fused(q, d, arity, KILN_BOOL, &fused);
        }
    }
    size_t turn = 0;
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++) {
        const np_case *c = &np_cases[k];
        if (k && !strcmp(np_cases[k - 1].name, c->name))
            continue; /* the first case of each op */
        size_t m = 0; /* its cases in this group */
        for (size_t j = k;
             j < sizeof np_cases / sizeof np_cases[0] && !strcmp(np_cases[j].name, c->name); j++)
            m += (!group || group_of(np_cases[j].dtype) == group) &&
                 (fp64 || dtype_of(np_cases[j].dtype) != KILN_FLOAT64);
        if (!m)
            continue;
        size_t pick = turn++ % m, seen = 0;
        for (size_t j = k;
             j < sizeof np_cases / sizeof np_cases[0] && !strcmp(np_cases[j].name, c->name); j++) {
            const np_case *e = &np_cases[j];
            if ((group && group_of(e->dtype) != group) ||
                (!fp64 && dtype_of(e->dtype) == KILN_FLOAT64))
                continue;
            if (all || seen++ == pick || dtype_of(e->dtype) == KILN_COMPLEX64) {
                size_t bad = run_case(q, e);
                CHECK_MSG(bad == 0, "%s(%s): %zu results differ from NumPy %s", e->name, e->dtype,
                          bad, NP_TABLES_NUMPY_VERSION);
                ran++;
                failed += bad != 0;
            }
        }
    }
    printf("element-wise: %zu cases in fused kernels, %zu through the array calls, against "
           "NumPy %s: %zu failed\n",
           fused, ran, NP_TABLES_NUMPY_VERSION, failed);
}

/* Ops on dtypes the standard does not let them take: INVALID_ARGUMENT
 * naming the op and the dtype; nothing is built or run. */
static void test_refused(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t four = 4;
    kiln_array *arr[NOPD] = { 0 };
    for (size_t j = 0; j < NOPD; j++)
        CHECK_OK(kiln_array_zeros(q, dtype_of(op_dtypes[j]), 1, &four, 0, NULL, NULL, &arr[j]));
    size_t refused = 0;
    for (size_t k = 0; k < sizeof np_cases / sizeof np_cases[0]; k++) {
        const np_case *c = &np_cases[k];
        if (k && !strcmp(np_cases[k - 1].name, c->name))
            continue;
        for (size_t j = 0; j < NOPD; j++) {
            if (find_case(c->name, c->arity, op_dtypes[j]) || !arr[j] ||
                int_divide(c->name, op_dtypes[j]))
                continue;
            kiln_status st = c->arity == 2 ? kiln_array_binary_out(q, (kiln_binary_op)c->op, arr[j],
                                                                   arr[j], arr[j], 0, NULL, NULL)
                                           : kiln_array_unary_out(q, (kiln_unary_op)c->op, arr[j],
                                                                  arr[j], 0, NULL, NULL);
            const char *m = kiln_last_error_message();
            kiln_dtype d = dtype_of(op_dtypes[j]);
            CHECK_MSG(
                st == KILN_ERROR_INVALID_ARGUMENT && strstr(m, kiln_dtype_name(d)) &&
                    strstr(m, c->arity == 2 ? "kiln_array_binary_out" : "kiln_array_unary_out"),
                "%s(%s): status %d, message '%s'", c->name, op_dtypes[j], (int)st, m);
            if (c->arity == 2) {
                st = kiln_array_binary_scalar_out(q, (kiln_binary_op)c->op, arr[j], arr[j],
                                                  kt_scalar(kiln_array_dtype(arr[j]), 1.0), 0, NULL,
                                                  NULL);
                CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT, "%s(%s) with a scalar: status %d",
                          c->name, op_dtypes[j], (int)st);
            }
            refused++;
        }
    }
    printf("refused: %zu op/dtype pairs\n", refused);
    CHECK(refused > 50);
    /* unknown ops */
    CHECK_STATUS(
        kiln_array_binary_out(q, (kiln_binary_op)99, arr[1], arr[1], arr[1], 0, NULL, NULL),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_unary_out(q, (kiln_unary_op)0, arr[1], arr[1], 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* a bool result into a complex out; a predicate's out of another shape */
    kiln_array *cz = NULL, *f5 = NULL;
    size_t five = 5;
    if (CHECK_OK(kiln_array_zeros(q, KILN_COMPLEX64, 1, &four, 0, NULL, NULL, &cz)))
        CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_LT, cz, arr[8], arr[8], 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
    if (CHECK_OK(kiln_array_zeros(q, KILN_BOOL, 1, &five, 0, NULL, NULL, &f5)))
        CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_ISNAN, f5, arr[8], 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
    /* an arithmetic op's out must have the promoted dtype */
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_POW, arr[1], arr[3], arr[3], 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    KT_RELEASE(cz, f5);
    for (size_t j = 0; j < NOPD; j++)
        kiln_array_release(arr[j]);
    (void)ctx;
}

/* Mixed dtypes and scalars with the new ops: promoted, weak scalars. */
static void test_mixed(kiln_queue *q, int fp64) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t n = 5;
    int8_t ha[5] = { -128, -7, 0, 7, 127 };
    uint8_t hb[5] = { 3, 2, 0, 9, 200 }, hbool[5] = { 1, 0, 1, 1, 0 };
    kiln_array *a = NULL, *b = NULL, *z = NULL, *bl = NULL, *zb = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT8, 1, &n, ha, &a));
    CHECK_OK(kiln_array_from_host(ctx, KILN_UINT8, 1, &n, hb, &b));
    CHECK_OK(kiln_array_from_host(ctx, KILN_BOOL, 1, &n, hbool, &bl));
    CHECK_OK(kiln_array_empty(ctx, KILN_INT16, 1, &n, &z));
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &zb));
    int16_t hz[5];
    uint8_t hzb[5];
    /* int8 // uint8 in int16 (NumPy: [-43, -4, 0, 0, 0]) */
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_FLOOR_DIVIDE, z, a, b, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, z, hz)))
        CHECK(hz[0] == -43 && hz[1] == -4 && hz[2] == 0 && hz[3] == 0 && hz[4] == 0);
    /* int8 << uint8 in int16: [-1024, -28, 0, 3584, 0] */
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_LEFT_SHIFT, z, a, b, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, z, hz)))
        CHECK_MSG(hz[0] == -1024 && hz[1] == -28 && hz[2] == 0 && hz[3] == 3584 && hz[4] == 0,
                  "%d %d %d %d %d", hz[0], hz[1], hz[2], hz[3], hz[4]);
    /* bool with int8: int8 */
    int8_t h8[5];
    kiln_array *z8 = NULL;
    CHECK_OK(kiln_array_empty(ctx, KILN_INT8, 1, &n, &z8));
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_ADD, z8, a, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, z8, h8)))
        CHECK(h8[0] == -127 && h8[1] == -7 && h8[2] == 1 && h8[3] == 8 && h8[4] == 127);
    /* comparisons of mixed dtypes into bool */
    if (CHECK_OK(kiln_array_binary_out(q, KILN_OP_LT, zb, a, b, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, zb, hzb)))
        CHECK(hzb[0] == 1 && hzb[1] == 1 && hzb[2] == 0 && hzb[3] == 1 && hzb[4] == 1);
    /* a weak scalar: int8 % 5 stays int8 (NumPy: [2, 3, 0, 2, 2]) */
    if (CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_REMAINDER, z8, a, KILN_ARG_I32(5), 0, NULL,
                                              NULL)) &&
        CHECK_OK(kiln_array_read(q, z8, h8)))
        CHECK(h8[0] == 2 && h8[1] == 3 && h8[2] == 0 && h8[3] == 2 && h8[4] == 2);
    /* bool array with a bool scalar: bool; a float scalar would compute in
     * float64 (NEP 50), and an int8 array with 300 overflows: refused */
    if (CHECK_OK(kiln_array_binary_scalar_out(q, KILN_OP_LOGICAL_AND, zb, bl, KILN_ARG_BOOL(1), 0,
                                              NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, zb, hzb)))
        CHECK(memcmp(hzb, hbool, 5) == 0);
    CHECK_STATUS(kiln_array_binary_scalar_out(q, KILN_OP_LOGICAL_AND, zb, bl, KILN_ARG_F64(0.5), 0,
                                              NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "computes in float64"));
    CHECK_STATUS(
        kiln_array_binary_scalar_out(q, KILN_OP_ADD, z8, a, KILN_ARG_F64(0.5), 0, NULL, NULL),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        kiln_array_binary_scalar_out(q, KILN_OP_ADD, z8, a, KILN_ARG_I32(300), 0, NULL, NULL),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "300 does not fit int8"));
    /* a predicate into a uint8 out (any real dtype gets 0 / 1) */
    kiln_array *u8 = NULL;
    CHECK_OK(kiln_array_empty(ctx, KILN_UINT8, 1, &n, &u8));
    if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_LOGICAL_NOT, u8, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, u8, hzb)))
        CHECK(hzb[0] == 0 && hzb[1] == 1 && hzb[2] == 0 && hzb[3] == 0 && hzb[4] == 1);
    /* complex128 (the tables cover complex64): square, isnan, isfinite, sqrt, log */
    double hc[6] = { 1, 2, NAN, 0, INFINITY, 0 }, hsq[6];
    size_t three = 3;
    kiln_array *c = NULL, *csq = NULL, *cb = NULL;
    uint8_t hcb[3];
    if (fp64 && CHECK_OK(kiln_array_from_host(ctx, KILN_COMPLEX128, 1, &three, hc, &c)) &&
        CHECK_OK(kiln_array_empty(ctx, KILN_COMPLEX128, 1, &three, &csq)) &&
        CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &three, &cb))) {
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_SQUARE, csq, c, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, csq, hsq)))
            CHECK(hsq[0] == -3 && hsq[1] == 4);
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_ISNAN, cb, c, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, cb, hcb)))
            CHECK(hcb[0] == 0 && hcb[1] == 1 && hcb[2] == 0);
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_ISFINITE, cb, c, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, cb, hcb)))
            CHECK(hcb[0] == 1 && hcb[1] == 0 && hcb[2] == 0);
        /* sqrt and log (NumPy 2.4.6: sqrt(1+2j) = 1.272019649514069+0.7861513777574233j,
         * log(1+2j) = 0.8047189562170503+1.1071487177940904j, sqrt(inf+0j) = inf+0j) */
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_SQRT, csq, c, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, csq, hsq)))
            CHECK(fabs(hsq[0] - 1.272019649514069) < 1e-15 &&
                  fabs(hsq[1] - 0.7861513777574233) < 1e-15 && isnan(hsq[2]) && isnan(hsq[3]) &&
                  isinf(hsq[4]) && hsq[5] == 0 && !signbit(hsq[5]));
        if (CHECK_OK(kiln_array_unary_out(q, KILN_OP_LOG, csq, c, 0, NULL, NULL)) &&
            CHECK_OK(kiln_array_read(q, csq, hsq)))
            CHECK(fabs(hsq[0] - 0.8047189562170503) < 1e-15 &&
                  fabs(hsq[1] - 1.1071487177940904) < 1e-15 && isinf(hsq[4]) && hsq[5] == 0);
        /* sin and the rest: tests/test_array_complex_fn.c */
        CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_SIN, csq, c, 0, NULL, NULL), KILN_OK);
        CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_FLOOR, csq, c, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
    }
    KT_RELEASE(c, csq, cb, a, b, z, z8, bl, zb, u8);
}

/* The bool dtype in conversions, where, masks and reductions. */
static void test_bool(kiln_queue *q, int fp64) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t n = 7;
    float hf[7] = { 0.0f, -0.0f, NAN, 0.5f, -INFINITY, 1e-40f, 3.0f };
    const uint8_t want[7] = { 0, 0, 1, 1, 1, 1, 1 };
    kiln_array *f = NULL, *bl = NULL, *back = NULL, *i64 = NULL, *c64 = NULL;
    CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &n, hf, &f));
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &bl));
    uint8_t hb[7];
    /* float -> bool: non-zero is true (NaN too; a subnormal too where the
     * device keeps it) */
    if (CHECK_OK(kiln_array_astype_out(q, bl, f, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, bl, hb)))
        for (size_t i = 0; i < n; i++)
            if (i != 5)
                CHECK_MSG(hb[i] == want[i], "astype(float32 %g -> bool) = %d", hf[i], hb[i]);
    /* bool -> float32 / int64 / complex64 */
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &back));
    float hback[7];
    if (CHECK_OK(kiln_array_astype_out(q, back, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, back, hback)))
        for (size_t i = 0; i < n; i++)
            CHECK(hback[i] == (float)hb[i]);
    CHECK_OK(kiln_array_empty(ctx, KILN_INT64, 1, &n, &i64));
    int64_t hi[7] = { 5, 0, -3, 0, 1, 0, 9 };
    if (CHECK_OK(kiln_array_write(q, i64, hi)) &&
        CHECK_OK(kiln_array_astype_out(q, bl, i64, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, bl, hb)))
        for (size_t i = 0; i < n; i++)
            CHECK(hb[i] == (hi[i] != 0));
    if (CHECK_OK(kiln_array_astype_out(q, i64, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, i64, hi)))
        CHECK(hi[0] == 1 && hi[1] == 0 && hi[2] == 1 && hi[6] == 1);
    CHECK_OK(kiln_array_empty(ctx, KILN_COMPLEX64, 1, &n, &c64));
    float hc[14] = { 0, 0, 0, 1, 2, 0, 0, -0.0f, NAN, 0, 0, 0, 1, 1 };
    if (CHECK_OK(kiln_array_write(q, c64, hc)) &&
        CHECK_OK(kiln_array_astype_out(q, bl, c64, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, bl, hb)))
        CHECK_MSG(hb[0] == 0 && hb[1] == 1 && hb[2] == 1 && hb[3] == 0 && hb[4] == 1 &&
                      hb[5] == 0 && hb[6] == 1,
                  "complex -> bool: %d %d %d %d %d %d %d", hb[0], hb[1], hb[2], hb[3], hb[4], hb[5],
                  hb[6]);
    if (CHECK_OK(kiln_array_astype_out(q, c64, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, c64, hc)))
        CHECK(hc[0] == 0 && hc[1] == 0 && hc[2] == 1 && hc[3] == 0);
    /* bool -> bool is a copy */
    kiln_array *bl2 = NULL;
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &bl2));
    CHECK_OK(kiln_array_astype_out(q, bl2, bl, 0, NULL, NULL));
    /* hb now: 0 1 1 0 1 0 1 (from the complex values) */
    /* where with a bool condition */
    float hw[7];
    kiln_array *w = NULL;
    CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &w));
    if (CHECK_OK(kiln_array_where_out(q, w, bl, f, back, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, w, hw)) && CHECK_OK(kiln_array_read(q, back, hback)))
        for (size_t i = 0; i < n; i++)
            CHECK(memcmp(&hw[i], hb[i] ? &hf[i] : &hback[i], 4) == 0);
    /* where over bool values: bool result */
    kiln_array *wb = NULL;
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &wb));
    uint8_t hwb[7];
    if (CHECK_OK(kiln_array_where_out(q, wb, bl, bl2, bl, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, wb, hwb)))
        CHECK(memcmp(hwb, hb, 7) == 0);
    /* a[mask] = value with a bool mask */
    float v = -5.0f, hm[7];
    if (CHECK_OK(kiln_array_mask_fill(q, w, bl, KILN_ARG_F32(v), 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, w, hm)))
        for (size_t i = 0; i < n; i++)
            CHECK(hb[i] ? hm[i] == -5.0f : memcmp(&hm[i], &hback[i], 4) == 0);
    /* any / all over bool (and the bool result dtype) */
    uint8_t r = 9;
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_ANY, KILN_BOOL) == KILN_BOOL);
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_ALL, KILN_FLOAT32) == KILN_BOOL);
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ANY, bl, &r)))
        CHECK(r == 1);
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ALL, bl, &r)))
        CHECK(r == 0);
    /* sum of bool counts the trues (NumPy: int64) */
    int64_t cnt = -1;
    CHECK(kiln_dtype_reduce_result(KILN_REDUCE_SUM, KILN_BOOL) == KILN_INT64);
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, bl, &cnt)))
        CHECK_MSG(cnt == 4, "sum(bool) = %lld", (long long)cnt);
    /* max over bool: a bool */
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_MAX, bl, &r)))
        CHECK(r == 1);
    /* the rest of the array API on bool: sort (false first), take,
     * concatenate, unique; cumsum and arange refuse it (not numeric) */
    kiln_array *sorted = NULL, *idx = NULL, *tk = NULL, *cat = NULL, *uq = NULL;
    uint8_t hs[7], ht[3];
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &sorted));
    kiln_sort_desc sd = KILN_SORT_DESC(.descending = 0);
    if (CHECK_OK(kiln_array_sort_out(q, sorted, NULL, bl, NULL, &sd, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, sorted, hs)))
        CHECK_MSG(hs[0] == 0 && hs[1] == 0 && hs[2] == 0 && hs[3] == 1 && hs[6] == 1,
                  "sort(bool): %d %d %d %d %d %d %d", hs[0], hs[1], hs[2], hs[3], hs[4], hs[5],
                  hs[6]);
    int32_t hidx[3] = { 6, 0, 1 };
    size_t three = 3;
    CHECK_OK(kiln_array_from_host(ctx, KILN_INT32, 1, &three, hidx, &idx));
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &three, &tk));
    if (CHECK_OK(kiln_array_take_out(q, tk, bl, idx, KILN_INDEX_CLIP, 0, NULL, NULL)) &&
        CHECK_OK(kiln_array_read(q, tk, ht)))
        CHECK(ht[0] == hb[6] && ht[1] == hb[0] && ht[2] == hb[1]);
    kiln_array *two[2] = { bl, bl2 };
    if (CHECK_OK(kiln_array_concatenate(q, 2, two, 0, 0, NULL, NULL, &cat))) {
        uint8_t hcat[14];
        CHECK(kiln_array_dtype(cat) == KILN_BOOL);
        if (CHECK_OK(kiln_array_read(q, cat, hcat)))
            CHECK(memcmp(hcat, hb, 7) == 0 && memcmp(hcat + 7, hb, 7) == 0);
    }
    int64_t nu = -1;
    CHECK_OK(kiln_array_empty(ctx, KILN_BOOL, 1, &n, &uq));
    if (CHECK_OK(kiln_array_unique_out(q, uq, NULL, NULL, &nu, sorted, 0, NULL, NULL)) &&
        CHECK_OK(kiln_queue_finish(q)))
        CHECK_MSG(nu == 2, "unique(sorted bool): %lld values", (long long)nu);
    CHECK_STATUS(kiln_array_cumsum_out(q, bl2, bl, 0, 0, NULL, NULL), KILN_ERROR_INVALID_ARGUMENT);
    kiln_array *ar = NULL;
    CHECK_STATUS(kiln_array_arange(q, KILN_BOOL, 3, 0, 1, 0, NULL, NULL, &ar),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_axpy_out(q, bl2, KILN_ARG_F64(2.0), bl, bl, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    KT_RELEASE(sorted, idx, tk, cat, uq);
    (void)fp64;
    KT_RELEASE(f, bl, bl2, back, i64, c64, w, wb);
}

/* 'b' (the default), 'i', 'f' or 'a' (all) */
static int group_arg = 'b';

/* Empty min/max raise unless an initial value is given (issue 42, item 6),
 * in kiln_array_reduce, its _async form and kiln_array_reduce_axis. */
static void test_empty_minmax(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t zero = 0, shape[2] = { 3, 0 };
    kiln_array *e = NULL, *e2 = NULL, *out = NULL;
    float r = 5, init = -2;
    if (!CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &zero, &e)) ||
        !CHECK_OK(kiln_array_empty(ctx, KILN_INT32, 2, shape, &e2)))
        goto done;
    for (int op = KILN_REDUCE_MIN; op <= KILN_REDUCE_MAX; op++) {
        kiln_status st = kiln_array_reduce(q, (kiln_reduce_op)op, e, &r);
        CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT && strstr(kiln_last_error_message(), "empty") &&
                      strstr(kiln_last_error_message(), "initial"),
                  "empty %s: status %d, '%s'", op == KILN_REDUCE_MIN ? "min" : "max", (int)st,
                  kiln_last_error_message());
        kiln_event *ev = (kiln_event *)&r; /* must come back NULL */
        CHECK_STATUS(kiln_array_reduce_async(q, (kiln_reduce_op)op, e, NULL, &r, 0, NULL, &ev),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK(ev == NULL);
        r = 5;
        if (CHECK_OK(kiln_array_reduce_initial(q, (kiln_reduce_op)op, e, KILN_ARG_F32(init), &r)))
            CHECK(r == -2);
        /* along a zero-length axis: no identity either */
        CHECK_STATUS(kiln_array_reduce_axis(q, (kiln_reduce_op)op, e2, 1, 0, 0, NULL, NULL, &out),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK(out == NULL);
    }
    /* the other reductions of nothing keep their identities */
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, e, &r)))
        CHECK(r == 0);
    uint8_t any = 9;
    if (CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_ALL, e, &any)))
        CHECK(any == 1);
done:
    KT_RELEASE(e, e2);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    if (group_arg == 'a' || group_arg == 'b') {
        test_refused(q);
        test_mixed(q, info.fp64);
        test_bool(q, info.fp64);
        test_empty_minmax(q);
    }
    run_cases(q, group_arg == 'a' ? 0 : group_arg, group_arg == 'a', info.fp64);
}

int main(int argc, char **argv) {
    printf("tables: NumPy %s\n", NP_TABLES_NUMPY_VERSION);
    if (argc > 1) {
        group_arg = !strcmp(argv[1], "bool")    ? 'b'
                    : !strcmp(argv[1], "int")   ? 'i'
                    : !strcmp(argv[1], "float") ? 'f'
                    : !strcmp(argv[1], "all")   ? 'a'
                                                : '?';
        if (group_arg == '?') {
            fprintf(stderr, "usage: %s [bool|int|float|all]\n", argv[0]);
            return 2;
        }
    }
    test_promote();
    test_result_dtypes();
    kt_for_each_device(run, NULL);
    return kt_report();
}
