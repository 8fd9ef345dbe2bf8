/* Reductions along an axis (kiln_array_reduce_axis, kiln_array_var_axis,
 * kiln_reduction_launch_axis) against serial references: every op and
 * dtype, 1-D to 3-D shapes with awkward and empty sizes, every axis, NaN,
 * keepdims, strided views; and concatenate / stack. Bad input as errors. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

static const kiln_reduce_op ops[] = { KILN_REDUCE_SUM,   KILN_REDUCE_PROD,   KILN_REDUCE_MIN,
                                      KILN_REDUCE_MAX,   KILN_REDUCE_ARGMIN, KILN_REDUCE_ARGMAX,
                                      KILN_REDUCE_NORM1, KILN_REDUCE_NORM2,  KILN_REDUCE_NORM_INF,
                                      KILN_REDUCE_MEAN,  KILN_REDUCE_VAR,    KILN_REDUCE_STD };
#define NOPS (sizeof ops / sizeof ops[0])

static int is_float(kiln_dtype d) {
    return d == KILN_FLOAT32 || d == KILN_FLOAT64 || d == KILN_FLOAT16;
}
static int is_signed(kiln_dtype d) {
    return d == KILN_INT8 || d == KILN_INT16 || d == KILN_INT32 || d == KILN_INT64 || is_float(d);
}

/* An integer result wrapped to dtype d's width, as the device computes. */
static double wrap(kiln_dtype d, uint64_t v) {
    unsigned bits = 8 * (unsigned)kiln_dtype_size(d);
    if (bits < 64)
        v &= (1ull << bits) - 1;
    if (is_signed(d) && bits < 64 && (v >> (bits - 1)))
        return (double)(int64_t)(v | ~((1ull << bits) - 1));
    return is_signed(d) ? (double)(int64_t)v : (double)v;
}

/* The reference of op over x[b + k*st], k < len, as the result dtype rd
 * holds it; *tol gets the allowed error. */
static double ref(kiln_reduce_op op, kiln_dtype d, const double *x, size_t b, size_t len, size_t st,
                  double *tol) {
    *tol = 0;
    double s = 0, sa = 0, p = 1, mn = HUGE_VAL, mx = -HUGE_VAL, q = 0;
    uint64_t is = 0, ip = 1;
    int overflow = 0; /* a float product beyond the dtype's range */
    double pa = 1;
    long amin = -1, amax = -1, nanpos = -1;
    for (size_t k = 0; k < len; k++) {
        double v = x[b + k * st];
        if (v != v) {
            if (nanpos < 0)
                nanpos = (long)k;
            continue;
        }
        s += v;
        sa += fabs(v);
        q += v * v;
        p *= v;
        /* any order of the product may overflow: the nonzero factors' */
        pa *= v != 0 ? fabs(v) : 1;
        overflow |= pa > (d == KILN_FLOAT64 ? 1e280 : 1e25);
        is += (uint64_t)(int64_t)v;
        ip *= (uint64_t)(int64_t)v;
        if (amin < 0 || v < mn) {
            mn = v;
            amin = (long)k;
        }
        if (amax < 0 || v > mx) {
            mx = v;
            amax = (long)k;
        }
    }
    int nan = nanpos >= 0;
    if (nan)
        amin = amax = nanpos;
    int f = is_float(d);
    double eps = d == KILN_FLOAT64 ? 1e-13 : 1e-5;
    double nanv = NAN;
    switch ((int)op) {
    case KILN_REDUCE_SUM:
        *tol = f ? eps * sa + 1e-30 : 0;
        return nan ? nanv : f ? s : wrap(d, is);
    case KILN_REDUCE_PROD:
        *tol = f ? eps * fabs(p) * (double)(len + 1) : 0;
        if (f && overflow && !nan)
            *tol = -1; /* order-dependent inf/NaN: not compared */
        return nan ? nanv : f ? p : wrap(d, ip);
    case KILN_REDUCE_MIN:
        return nan ? nanv : mn;
    case KILN_REDUCE_MAX:
        return nan ? nanv : mx;
    case KILN_REDUCE_ARGMIN:
        return (double)amin;
    case KILN_REDUCE_ARGMAX:
        return (double)amax;
    case KILN_REDUCE_NORM1:
        *tol = (f ? eps : 1e-13) * sa;
        return nan ? nanv : sa;
    case KILN_REDUCE_NORM2:
        *tol = (f ? eps : 1e-13) * sqrt(q);
        return nan ? nanv : sqrt(q);
    case KILN_REDUCE_NORM_INF:
        return nan ? nanv : len ? fmax(fabs(mn), fabs(mx)) : 0;
    }
    /* mean, var, std: two passes in double */
    if (nan || !len)
        return nanv;
    double m = s / (double)len, m2 = 0;
    for (size_t k = 0; k < len; k++)
        m2 += (x[b + k * st] - m) * (x[b + k * st] - m);
    double var = m2 / (double)len;
    double e = d == KILN_FLOAT16 || d == KILN_FLOAT32 ? 1e-5 : 1e-12;
    if ((int)op == (int)KILN_REDUCE_MEAN) {
        *tol = e * (sa / (double)len) + 1e-30;
        return m;
    }
    *tol = e * (q / (double)len) + 1e-30;
    if ((int)op == (int)KILN_REDUCE_STD) {
        *tol = sqrt(*tol) + e * sqrt(var);
        return sqrt(var);
    }
    return var;
}

/* Reduces the dense host data x (shape sh, nd dims, already on the device
 * as A, which may be a view) along every axis with every op. */
static void check_all(kiln_queue *q, kiln_array *A, const double *x, const char *label,
                      int nan_case) {
    kiln_array_info info;
    kiln_array_get_info(A, &info);
    kiln_dtype d = info.dtype;
    for (unsigned ax = 0; ax < info.ndim; ax++) {
        size_t outer = 1, inner = 1, len = info.shape[ax];
        for (unsigned k = 0; k < info.ndim; k++) {
            if (k < ax)
                outer *= info.shape[k];
            if (k > ax)
                inner *= info.shape[k];
        }
        for (size_t oi = 0; oi < NOPS; oi++) {
            kiln_reduce_op op = ops[oi];
            if (nan_case && op == KILN_REDUCE_PROD)
                continue;
            int noid = op == KILN_REDUCE_MIN || op == KILN_REDUCE_MAX || op == KILN_REDUCE_ARGMIN ||
                       op == KILN_REDUCE_ARGMAX;
            kiln_array *R = NULL;
            kiln_event *e = NULL;
            int keep = (int)(oi & 1);
            int axis = (oi & 2) ? (int)ax - (int)info.ndim : (int)ax;
            kiln_status st = kiln_array_reduce_axis(q, op, A, axis, keep, 0, NULL, &e, &R);
            if (noid && len == 0 && outer * inner > 0) {
                CHECK_MSG(st == KILN_ERROR_INVALID_ARGUMENT, "%s empty axis op %d: %d", label,
                          (int)op, (int)st);
                continue;
            }
            if (!CHECK_OK(st))
                continue;
            CHECK_OK(kiln_event_wait(e));
            kiln_event_release(e);
            kiln_array_info ri;
            kiln_array_get_info(R, &ri);
            kiln_dtype rd = ri.dtype;
            CHECK(rd == kiln_dtype_reduce_axis_result(op, d));
            CHECK(ri.size == outer * inner || (ri.size == 1 && info.ndim == 1));
            CHECK(!keep || (ri.ndim == info.ndim && ri.shape[ax] == 1));
            size_t no = outer * inner;
            char *r = malloc(no * 8 + 8);
            CHECK_OK(kiln_array_read(q, R, r));
            int bad = 0;
            for (size_t o = 0; o < no && bad < 3; o++) {
                size_t b = (o / inner) * len * inner + o % inner;
                double tol;
                double w = ref(op, d, x, b, len, inner, &tol);
                double g = kt_get(rd, r, o);
                int ok = tol < 0 || ((w != w) ? g != g : fabs(g - w) <= tol);
                if (!ok)
                    bad++;
                CHECK_MSG(ok,
                          "%s %s axis %u op %d out %zu: got %.17g want "
                          "%.17g",
                          label, kiln_dtype_name(d), ax, (int)op, o, g, w);
            }
            free(r);
            kiln_array_release(R);
        }
    }
}

static double rnd(kiln_dtype d) {
    if (is_float(d))
        return (double)(int)(kt_rand_u64() % 2001) / 250.0 - 4.0; /* exact */
    double v = (double)(kt_rand_u64() % 4);
    return is_signed(d) && (kt_rand_u64() & 1) ? -v : v;
}

/* Half bits of v, a normal value (or 0) exactly representable in half. */
static uint16_t to_half(double v) {
    if (v == 0)
        return 0;
    uint16_t sign = v < 0 ? 0x8000 : 0;
    int e;
    double m = frexp(fabs(v), &e); /* |v| = m * 2^e, m in [0.5, 1) */
    return (uint16_t)(sign | (uint16_t)((e - 1 + 15) << 10) | (uint16_t)((2 * m - 1) * 1024));
}

static void check_shape(kiln_queue *q, kiln_dtype d, unsigned nd, const size_t *sh, int nan_case) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1;
    for (unsigned k = 0; k < nd; k++)
        n *= sh[k];
    size_t es = kiln_dtype_size(d);
    char *h = malloc(n * es + 8);
    double *x = malloc(n * sizeof *x + 8);
    for (size_t i = 0; i < n; i++) {
        if (d == KILN_FLOAT16) {
            x[i] = (double)(kt_rand_u64() % 33) / 4.0 - 4.0;
            ((uint16_t *)h)[i] = to_half(x[i]);
            continue;
        }
        kt_set(d, h, i, rnd(d));
        x[i] = kt_get(d, h, i);
    }
    if (nan_case && n) {
        size_t at = kt_rand_u64() % n;
        kt_set(d, h, at, NAN);
        x[at] = NAN;
    }
    kiln_array *A = NULL;
    char label[64];
    snprintf(label, sizeof label, "shape %zux%zux%zu%s", sh[0], nd > 1 ? sh[1] : 1,
             nd > 2 ? sh[2] : 1, nan_case ? " NaN" : "");
    if (CHECK_OK(kiln_array_from_host(c, d, nd, sh, h, &A)))
        check_all(q, A, x, label, nan_case);
    kiln_array_release(A);
    KT_FREE(h, x);
}

/* A strided view: a 3-D array sliced with steps and one axis reversed;
 * the reference reads the view back densely. */
static void check_view(kiln_queue *q, kiln_dtype d) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[3] = { 9, 14, 23 }, n = 9 * 14 * 23;
    size_t es = kiln_dtype_size(d);
    char *h = malloc(n * es);
    for (size_t i = 0; i < n; i++)
        kt_set(d, h, i, rnd(d));
    kiln_array *A = NULL, *V = NULL, *T = NULL;
    CHECK_OK(kiln_array_from_host(c, d, 3, sh, h, &A));
    kiln_slice sl[3] = { KILN_SLICE(1, 8, 2), KILN_SLICE_REVERSED, KILN_SLICE(2, 21, 3) };
    if (CHECK_OK(kiln_array_view(A, sl, &V)) && CHECK_OK(kiln_array_swapaxes(V, 0, 2, &T))) {
        kiln_array_info vi;
        kiln_array_get_info(T, &vi);
        char *vh = malloc(vi.size * es + 8);
        double *x = malloc(vi.size * sizeof *x + 8);
        CHECK_OK(kiln_array_read(q, T, vh));
        for (size_t i = 0; i < vi.size; i++)
            x[i] = kt_get(d, vh, i);
        check_all(q, T, x, "strided view", 0);
        KT_FREE(vh, x);
    }
    KT_RELEASE(T, V, A);
    free(h);
}

/* A user reduction along an axis: sum of x*w, and its errors. */
static void check_generator(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[2] = { 37, 129 }, n = 37 * 129;
    float *x = malloc(n * 4), *w = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(kt_rand_u64() % 9);
        w[i] = (float)(kt_rand_u64() % 5);
    }
    kiln_array *X = NULL, *W = NULL, *O = NULL, *B = NULL;
    kiln_reduction *r = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 2, sh, x, &X));
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 2, sh, w, &W));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &sh[1], &O));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &sh[1], &B));
    CHECK_OK(kiln_reduction_create(
        c,
        &KILN_REDUCTION_DESC(.arguments = "const float *x, const float *w", .out_type = "float",
                             .neutral = "0", .reduce = "a+b", .map = "x[i]*w[i]"),
        &r));
    kiln_arg args[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(W) };
    kiln_event *e = NULL;
    if (CHECK_OK(kiln_reduction_launch_axis(q, r, 0, 2, args, O, 0, NULL, &e))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        float got[129];
        CHECK_OK(kiln_array_read(q, O, got));
        int ok = 1;
        for (size_t j = 0; j < 129; j++) {
            float s = 0;
            for (size_t k = 0; k < 37; k++)
                s += x[k * 129 + j] * w[k * 129 + j];
            ok &= got[j] == s;
        }
        CHECK_MSG(ok, "user reduction along axis 0");
    }
    /* wrong out dtype, wrong out size, bad axis, a non-array first arg */
    CHECK_STATUS(kiln_reduction_launch_axis(q, r, 0, 2, args, B, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_reduction_launch_axis(q, r, 1, 2, args, O, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_reduction_launch_axis(q, r, 2, 2, args, O, 0, NULL, NULL),
                 KILN_ERROR_OUT_OF_RANGE);
    kiln_arg bad[2] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(W) };
    CHECK_STATUS(kiln_reduction_launch_axis(q, r, 0, 2, bad, O, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_STATUS(kiln_reduction_launch_axis(q, r, 0, 2, args, NULL, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(r, X, W, O, B);
    KT_FREE(x, w);
}

static void check_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t sh[2] = { 3, 4 };
    kiln_array *A = NULL, *R = (kiln_array *)1;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, sh, 0, NULL, NULL, &A));
    CHECK_STATUS(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, A, 2, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK(R == NULL);
    CHECK_STATUS(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, A, -3, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_reduce_axis(q, (kiln_reduce_op)99, A, 0, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, NULL, 0, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_reduce_axis(q, KILN_REDUCE_SUM, A, 0, 0, 0, NULL, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_array_var_axis(q, A, 0, -1, 0, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* var with ddof: numpy.var([[1,2],[3,5]], axis=1, ddof=1) = [0.5, 2] */
    double v[4] = { 1, 2, 3, 5 }, got[2] = { 0, 0 };
    kiln_array *B = NULL;
    size_t s2[2] = { 2, 2 };
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 2, s2, v, &B));
    if (CHECK_OK(kiln_array_var_axis(q, B, 1, 1, 0, 0, 0, NULL, NULL, &R))) {
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK(got[0] == 0.5 && got[1] == 2);
        kiln_array_release(R);
    }
    /* ddof = count: NaN; std */
    if (CHECK_OK(kiln_array_var_axis(q, B, 0, 2, 1, 0, 0, NULL, NULL, &R))) {
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK(got[0] != got[0] && got[1] != got[1]);
        kiln_array_release(R);
    }
    if (CHECK_OK(kiln_array_var_axis(q, B, 0, 1, 1, 0, 0, NULL, NULL, &R))) {
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK(fabs(got[0] - sqrt(2.0)) < 1e-15 && fabs(got[1] - sqrt(4.5)) < 1e-15);
        kiln_array_release(R);
    }
    KT_RELEASE(B, A);
}

/* concatenate and stack against a host reference. */
static void check_join(kiln_queue *q, kiln_dtype d) {
    kiln_context *c = kiln_queue_context(q);
    size_t es = kiln_dtype_size(d);
    /* three 2-D arrays of shapes (3,5), (0,5), (7,5) (axis 0), and their
     * transposes' views (axis 1) */
    size_t rows[3] = { 3, 0, 7 };
    kiln_array *A[3] = { 0 }, *T[3] = { 0 };
    char *h[3];
    for (int k = 0; k < 3; k++) {
        size_t sh[2] = { rows[k], 5 };
        h[k] = malloc(rows[k] * 5 * es + 8);
        for (size_t i = 0; i < rows[k] * 5; i++)
            kt_set(d, h[k], i, rnd(d));
        CHECK_OK(kiln_array_from_host(c, d, 2, sh, h[k], &A[k]));
        CHECK_OK(kiln_array_swapaxes(A[k], 0, 1, &T[k]));
    }
    kiln_array *R = NULL;
    kiln_event *e = NULL;
    char *got = malloc(10 * 5 * 3 * es + 8);
    if (CHECK_OK(kiln_array_concatenate(q, 3, A, 0, 0, NULL, &e, &R))) {
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        kiln_array_info ri;
        kiln_array_get_info(R, &ri);
        CHECK(ri.ndim == 2 && ri.shape[0] == 10 && ri.shape[1] == 5);
        CHECK_OK(kiln_array_read(q, R, got));
        CHECK(!memcmp(got, h[0], 15 * es) && !memcmp(got + 15 * es, h[2], 35 * es));
        kiln_array_release(R);
    }
    if (CHECK_OK(kiln_array_concatenate(q, 3, T, -1, 0, NULL, NULL, &R))) {
        CHECK_OK(kiln_array_read(q, R, got));
        int ok = 1;
        for (size_t i = 0; i < 5; i++)
            for (size_t j = 0; j < 10; j++) {
                const char *src = j < 3 ? h[0] + (j * 5 + i) * es : h[2] + ((j - 3) * 5 + i) * es;
                ok &= !memcmp(got + (i * 10 + j) * es, src, es);
            }
        CHECK_MSG(ok, "concatenate of transposed views along axis 1 (%s)", kiln_dtype_name(d));
        kiln_array_release(R);
    }
    /* stack two (3,5) arrays along axes 0, 1, 2 */
    kiln_array *S[2] = { A[0], A[0] };
    size_t sh2[2] = { 3, 5 };
    kiln_array *A2 = NULL;
    char *h2 = malloc(15 * es);
    for (size_t i = 0; i < 15; i++)
        kt_set(d, h2, i, rnd(d));
    CHECK_OK(kiln_array_from_host(c, d, 2, sh2, h2, &A2));
    S[1] = A2;
    for (int ax = 0; ax <= 2; ax++) {
        if (!CHECK_OK(kiln_array_stack(q, 2, S, ax, 0, NULL, NULL, &R)))
            continue;
        kiln_array_info ri;
        kiln_array_get_info(R, &ri);
        CHECK(ri.ndim == 3 && ri.shape[ax] == 2 && ri.size == 30);
        CHECK_OK(kiln_array_read(q, R, got));
        int ok = 1;
        for (size_t k = 0; k < 2; k++)
            for (size_t i = 0; i < 3; i++)
                for (size_t j = 0; j < 5; j++) {
                    size_t idx[3] = { i, j, 0 }, at;
                    /* the new axis ax holds k */
                    size_t full[3];
                    for (int t = 0, u = 0; t < 3; t++)
                        full[t] = t == ax ? k : idx[u++];
                    at = (full[0] * ri.shape[1] + full[1]) * ri.shape[2] + full[2];
                    const char *src = (k ? h2 : h[0]) + (i * 5 + j) * es;
                    ok &= !memcmp(got + at * es, src, es);
                }
        CHECK_MSG(ok, "stack along axis %d (%s)", ax, kiln_dtype_name(d));
        kiln_array_release(R);
    }
    /* errors: shapes that do not match, dtypes, n = 0, a bad axis */
    kiln_array *M[2] = { A[0], T[0] };
    CHECK_STATUS(kiln_array_concatenate(q, 2, M, 0, 0, NULL, NULL, &R), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_stack(q, 2, M, 0, 0, NULL, NULL, &R), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_concatenate(q, 0, M, 0, 0, NULL, NULL, &R),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_concatenate(q, 2, S, 2, 0, NULL, NULL, &R), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_array_stack(q, 2, S, 3, 0, NULL, NULL, &R), KILN_ERROR_OUT_OF_RANGE);
    kiln_array *Z = NULL;
    CHECK_OK(
        kiln_array_zeros(q, d == KILN_INT8 ? KILN_UINT8 : KILN_INT8, 2, sh2, 0, NULL, NULL, &Z));
    kiln_array *D[2] = { A2, Z };
    CHECK_STATUS(kiln_array_concatenate(q, 2, D, 0, 0, NULL, NULL, &R), KILN_ERROR_MISMATCH);
    CHECK(R == NULL);
    KT_RELEASE(Z, A2);
    KT_FREE(h2, got);
    for (int k = 0; k < 3; k++) {
        KT_RELEASE(A[k], T[k]);
        free(h[k]);
    }
}

/* The GPU column kernel's counters live in a context's scratch buffer,
 * made half again as large as asked: a later call with more columns
 * reuses it and reads counters past those of the call that made it, which
 * must be zero too (the soak's axis sums failed from column 57 on cuda:0
 * and 63 on NVIDIA's OpenCL). A fresh context whose pool holds nonzero
 * blocks; column counts that grow within the buffer, then past it. Runs
 * the fused kernel on GPUs and under KILN_PLAN_GPU. */
static void check_counters_grow(kiln_queue *q) {
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *c = NULL;
    kiln_queue *q2 = NULL;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c)) || !CHECK_OK(kiln_queue_create(c, dev, 0, &q2)))
        goto out;
    for (size_t bytes = 256; bytes <= 8192; bytes *= 2) {
        kiln_buffer *junk[3] = { NULL, NULL, NULL };
        static const uint32_t ones = 0x01010101u;
        for (int i = 0; i < 3; i++)
            if (CHECK_OK(kiln_buffer_create(c, bytes, KILN_BUFFER_POOLED, NULL, &junk[i])))
                CHECK_OK(
                    kiln_buffer_fill(q2, junk[i], &ones, sizeof ones, 0, bytes, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(q2));
        for (int i = 0; i < 3; i++)
            kiln_buffer_release(junk[i]);
    }
    static const size_t cols_seq[] = { 40, 59, 60, 88, 130, 131, 200, 299 };
    const size_t rows = 1500;
    int32_t *h = malloc(rows * 299 * sizeof *h);
    int64_t *got = malloc(299 * sizeof *got);
    CHECK(h && got);
    if (!h || !got)
        goto done;
    unsigned seed = 777;
    for (size_t k = 0; k < sizeof cols_seq / sizeof cols_seq[0]; k++) {
        size_t cols = cols_seq[k], sh[2] = { rows, cols };
        for (size_t i = 0; i < rows * cols; i++) {
            seed = seed * 1103515245u + 12345u;
            h[i] = (int32_t)((seed >> 16) % 201) - 100;
        }
        kiln_array *m = NULL, *o = NULL;
        if (CHECK_OK(kiln_array_from_host(c, KILN_INT32, 2, sh, h, &m)) &&
            CHECK_OK(kiln_array_reduce_axis(q2, KILN_REDUCE_SUM, m, 0, 0, 0, NULL, NULL, &o)) &&
            kiln_array_size(o) == cols && CHECK_OK(kiln_array_read(q2, o, got))) {
            int i64 = kiln_array_dtype(o) == KILN_INT64;
            size_t bad = 0, first = 0;
            for (size_t j = 0; j < cols; j++) {
                int64_t want = 0;
                for (size_t i = 0; i < rows; i++)
                    want += h[i * cols + j];
                int64_t g = i64 ? got[j] : ((int32_t *)got)[j];
                if (g != want && bad++ == 0)
                    first = j;
            }
            CHECK_MSG(bad == 0,
                      "sum over axis 0 of (%zu, %zu) after (%zu columns): %zu wrong, first %zu",
                      rows, cols, k ? cols_seq[k - 1] : 0, bad, first);
        }
        CHECK_MSG(!o || kiln_array_size(o) == cols, "%zu sums of %zu columns", kiln_array_size(o),
                  cols);
        KT_RELEASE(m, o);
    }
done:
    KT_FREE(h, got);
out:
    if (q2)
        kiln_queue_finish(q2);
    KT_RELEASE(q2, c);
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    static const size_t shapes[][4] = {
        /* nd, shape */
        { 1, 7, 0, 0 },
        { 1, 1, 0, 0 },
        { 1, 0, 0, 0 },
        { 2, 13, 17, 0 },
        { 2, 1, 257, 0 },
        { 2, 257, 3, 0 },
        { 2, 5, 0, 0 },
        { 2, 0, 4, 0 },
        { 3, 3, 4, 5 },
        { 3, 2, 33, 65 },
        { 2, 3, 4099, 0 },
        { 2, 4099, 2, 0 },
        /* CPU: rows of at least 256 down an axis of at least 64 are read
         * by blocks of up to 4096 columns (a short last block here) */
        { 2, 70, 300, 0 },
        { 3, 2, 64, 4099 },
    };
    size_t nshapes = sizeof shapes / sizeof shapes[0];
    /* KT_AXIS_QUICK=1: three dtypes (ctest's KILN_PLAN_GPU run, where
     * every program is built again for the GPU variants) */
    const char *quick = getenv("KT_AXIS_QUICK");
    for (size_t di = 0; di < KT_NDTYPES; di++) {
        kiln_dtype d = kt_dtypes[di];
        if (quick && *quick == '1' && d != KILN_FLOAT32 && d != KILN_INT32 && d != KILN_FLOAT64)
            continue;
        for (size_t s = 0; s < nshapes; s++)
            check_shape(q, d, (unsigned)shapes[s][0], &shapes[s][1], 0);
        if (is_float(d)) {
            size_t sh[2] = { 31, 67 };
            check_shape(q, d, 2, sh, 1);
        }
        check_join(q, d);
    }
    /* float16 (read as half, computed in float) on a few shapes */
    for (size_t s = 3; s < 6; s++)
        check_shape(q, KILN_FLOAT16, (unsigned)shapes[s][0], &shapes[s][1], 0);
    check_view(q, KILN_FLOAT32);
    check_view(q, KILN_INT64);
    check_view(q, KILN_FLOAT64);
    check_generator(q);
    check_errors(q);
    check_counters_grow(q);
}

/* The CUDA column reduction's split for whole waves (host arithmetic; the
 * H100 figures in array_axis.c): the picks measured there, and on random
 * shapes a split within [1, len/16] whose waves are filled to >= 95%, or
 * else no other split up to four waves fills them better. */
static void check_wave_split(void) {
    const size_t r = 132 * 6 * 256; /* an H100: 6 groups of 256 per SM */
    CHECK(kiln__axis_wave_split(16384, 16384, r) == 12);
    CHECK(kiln__axis_wave_split(65536, 4096, r) == 3);
    CHECK(kiln__axis_wave_split(131072, 2048, r) == 3);
    CHECK(kiln__axis_wave_split(4096, 65536, r) == 48);
    CHECK(kiln__axis_wave_split(3, 1000000, r) == 62500); /* cannot fill */
    CHECK(kiln__axis_wave_split(100000, 16, r) == 1);
    CHECK(kiln__axis_wave_split(5, 7, r) == 1);
    unsigned seed = 12345;
    size_t bad = 0;
    for (int k = 0; k < 2000; k++) {
        seed = seed * 1103515245u + 12345u;
        size_t nout = 1 + (seed >> 8) % 300000;
        seed = seed * 1103515245u + 12345u;
        size_t len = 1 + (seed >> 8) % 200000;
        size_t res = (size_t)(1 + k % 16) * 132 * 128;
        size_t s = kiln__axis_wave_split(nout, len, res);
        size_t cap = len / 16 ? len / 16 : 1;
        double fill = (double)(nout * s) / (double)(((nout * s + res - 1) / res) * res);
        int ok = s >= 1 && s <= cap;
        if (ok && fill < 0.95 && cap > res / nout)
            for (size_t t = 1; t <= cap && nout * t <= 4 * res; t++) {
                double f = (double)(nout * t) / (double)(((nout * t + res - 1) / res) * res);
                if (f > fill + 1e-12)
                    ok = 0;
            }
        bad += !ok;
    }
    CHECK_MSG(bad == 0, "%zu of 2000 random shapes got a worse split", bad);
}

int main(void) {
    check_wave_split();
    kt_for_each_device(run, NULL);
    return kt_report();
}
