/* The elementwise generator: every dtype at awkward sizes against a serial
 * reference, strided views (2-D, 3-D, reversed), gathers, build errors that
 * quote the user's text, mismatches, and arrays released while in flight. */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* One generated kernel covers every dtype (one compile instead of ten):
 * z_k[i] = a*x_k[i] + y_k[i] for each dtype k, all arrays of size n. */
static void t_axpy_all_dtypes(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    size_t nd = KT_NDTYPES;
    if (!info.fp64)
        nd--; /* float64 is last */
    char args[2048] = "int a", op[2048] = "";
    for (size_t k = 0; k < nd; k++) {
        const char *t = kiln_dtype_name(kt_dtypes[k]);
        size_t l = strlen(args), m = strlen(op);
        snprintf(args + l, sizeof args - l, ", const %s *x%zu, const %s *y%zu, %s *z%zu", t, k, t,
                 k, t, k);
        snprintf(op + m, sizeof op - m, "z%zu[i] = a*x%zu[i] + y%zu[i]; ", k, k, k);
    }
    kiln_elementwise *ew = NULL;
    if (!CHECK_OK(
            kiln_elementwise_create(c, &KILN_ELEMENTWISE_DESC(args, op, "axpy_all", NULL, 0), &ew)))
        return;
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, (1u << 20) + 1);
    for (size_t si = 0; si < ns; si++) {
        size_t n = sizes[si];
        char *x[10], *y[10], *z[10];
        kiln_array *X[10], *Y[10], *Z[10];
        kiln_arg v[31];
        v[0] = KILN_ARG_I32(3);
        for (size_t k = 0; k < nd; k++) {
            kiln_dtype d = kt_dtypes[k];
            size_t es = kiln_dtype_size(d);
            x[k] = malloc(n * es + 8);
            y[k] = malloc(n * es + 8);
            z[k] = malloc(n * es + 8);
            for (size_t i = 0; i < n; i++) {
                kt_set(d, x[k], i, (double)(kt_rand_u64() % 10));
                kt_set(d, y[k], i, (double)(kt_rand_u64() % 10));
            }
            X[k] = Y[k] = Z[k] = NULL;
            CHECK_OK(kiln_array_from_host(c, d, 1, &n, x[k], &X[k]));
            CHECK_OK(kiln_array_from_host(c, d, 1, &n, y[k], &Y[k]));
            CHECK_OK(kiln_array_empty(c, d, 1, &n, &Z[k]));
            v[1 + 3 * k] = KILN_ARG_ARRAY(X[k]);
            v[2 + 3 * k] = KILN_ARG_ARRAY(Y[k]);
            v[3 + 3 * k] = KILN_ARG_ARRAY(Z[k]);
        }
        kiln_event *e = NULL;
        CHECK_OK(kiln_elementwise_launch(q, ew, n, 1 + 3 * nd, v, 0, NULL, &e));
        for (size_t k = 0; k < nd; k++)
            CHECK_OK(kiln_array_read_async(q, Z[k], z[k], 1, &e, NULL));
        CHECK_OK(kiln_queue_finish(q));
        for (size_t k = 0; k < nd; k++) {
            kiln_dtype d = kt_dtypes[k];
            size_t bad = 0;
            for (size_t i = 0; i < n; i++)
                if (kt_get(d, z[k], i) != 3 * kt_get(d, x[k], i) + kt_get(d, y[k], i))
                    bad++;
            CHECK_MSG(bad == 0, "axpy %s n=%zu: %zu wrong", kiln_dtype_name(d), n, bad);
            KT_RELEASE(X[k], Y[k], Z[k]);
            KT_FREE(x[k], y[k], z[k]);
        }
        kiln_event_release(e);
    }
    kiln_elementwise_release(ew);
}

static void t_strided(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    /* 2-D: x = A[1:-1:2, ::3] of a 37x53 array, y = transpose of an 18x18. */
    size_t sa[2] = { 37, 53 }, sb[2] = { 18, 18 };
    float A[37 * 53], B[18 * 18], Z[18 * 18];
    for (size_t i = 0; i < 37 * 53; i++)
        A[i] = (float)(kt_rand_u64() % 1000);
    for (size_t i = 0; i < 18 * 18; i++)
        B[i] = (float)(kt_rand_u64() % 1000);
    kiln_array *a = NULL, *b = NULL, *xv = NULL, *yv = NULL, *z = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 2, sa, A, &a));
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 2, sb, B, &b));
    kiln_slice sl[2] = { KILN_SLICE(1, -1, 2), KILN_SLICE(0, PTRDIFF_MAX, 3) };
    CHECK_OK(kiln_array_view(a, sl, &xv));
    CHECK_OK(kiln_array_swapaxes(b, 0, 1, &yv));
    kiln_array_info info;
    CHECK_OK(kiln_array_get_info(xv, &info));
    CHECK(info.shape[0] == 18 && info.shape[1] == 18 && !info.contiguous);
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 2, sb, &z));
    kiln_elementwise *ew = NULL;
    CHECK_OK(
        kiln_elementwise_create(c,
                                &KILN_ELEMENTWISE_DESC("const float *x, const float *y, float *z",
                                                       "z[i] = x[i] - 2*y[i]", "sub2", NULL, 0),
                                &ew));
    kiln_arg v[3] = { KILN_ARG_ARRAY(xv), KILN_ARG_ARRAY(yv), KILN_ARG_ARRAY(z) };
    CHECK_OK(kiln_elementwise_launch(q, ew, 18 * 18, 3, v, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, Z));
    size_t bad = 0;
    for (size_t r = 0; r < 18; r++)
        for (size_t k = 0; k < 18; k++)
            if (Z[r * 18 + k] != A[(1 + 2 * r) * 53 + 3 * k] - 2 * B[k * 18 + r])
                bad++;
    CHECK_MSG(bad == 0, "2-D strided: %zu wrong", bad);
    /* Writing through a strided output view: z^T = x. */
    kiln_array *zt = NULL;
    CHECK_OK(kiln_array_swapaxes(z, 0, 1, &zt));
    kiln_elementwise *cp = NULL;
    CHECK_OK(kiln_elementwise_create(
        c, &KILN_ELEMENTWISE_DESC("float *o, const float *x", "o[i] = x[i]", "cp", NULL, 0), &cp));
    kiln_arg v2[2] = { KILN_ARG_ARRAY(zt), KILN_ARG_ARRAY(xv) };
    CHECK_OK(kiln_elementwise_launch(q, cp, 18 * 18, 2, v2, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, Z));
    bad = 0;
    for (size_t r = 0; r < 18; r++)
        for (size_t k = 0; k < 18; k++)
            if (Z[k * 18 + r] != A[(1 + 2 * r) * 53 + 3 * k])
                bad++;
    CHECK_MSG(bad == 0, "strided output: %zu wrong", bad);
    /* 3-D with a negative step and 1-D reversed. */
    size_t s3[3] = { 5, 6, 7 };
    double D[5 * 6 * 7], O[5 * 4 * 4];
    for (size_t i = 0; i < 210; i++)
        D[i] = (double)i;
    kiln_array *d3 = NULL, *v3 = NULL, *o3 = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT64, 3, s3, D, &d3));
    kiln_slice sl3[3] = { KILN_SLICE_REVERSED, KILN_SLICE(1, 5, 1), KILN_SLICE(0, PTRDIFF_MAX, 2) };
    CHECK_OK(kiln_array_view(d3, sl3, &v3));
    size_t so[3] = { 5, 4, 4 };
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT64, 3, so, &o3));
    kiln_elementwise *dbl = NULL;
    CHECK_OK(kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC("double *o, const double *x", "o[i] = 2*x[i] + n", "dbl", NULL, 0),
        &dbl));
    kiln_arg v3v[2] = { KILN_ARG_ARRAY(o3), KILN_ARG_ARRAY(v3) };
    CHECK_OK(kiln_elementwise_launch(q, dbl, 5 * 4 * 4, 2, v3v, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, o3, O));
    bad = 0;
    for (size_t i0 = 0; i0 < 5; i0++)
        for (size_t i1 = 0; i1 < 4; i1++)
            for (size_t i2 = 0; i2 < 4; i2++)
                if (O[(i0 * 4 + i1) * 4 + i2] != 2 * D[((4 - i0) * 6 + 1 + i1) * 7 + 2 * i2] + 80)
                    bad++;
    CHECK_MSG(bad == 0, "3-D strided: %zu wrong", bad);
    KT_RELEASE(a, b, xv, yv, z, zt, d3, v3, o3, ew, cp, dbl);
}

static void t_gather(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t nx = 1000, n = 4093;
    float x[1000], y[4093];
    int idx[4093];
    for (size_t i = 0; i < nx; i++)
        x[i] = (float)i * 0.5f;
    for (size_t i = 0; i < n; i++)
        idx[i] = (int)(kt_rand_u64() % nx);
    kiln_array *X = NULL, *I = NULL, *Y = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &nx, x, &X));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, idx, &I));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &Y));
    kiln_elementwise *ew = NULL;
    CHECK_OK(kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC("float *y, const int *idx, const float *x", "y[i] = x[idx[i]]",
                               "gather", NULL, KILN_ELEMENTWISE_ANY_SHAPE),
        &ew));
    kiln_arg v[3] = { KILN_ARG_ARRAY(Y), KILN_ARG_ARRAY(I), KILN_ARG_ARRAY(X) };
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 3, v, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Y, y));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += y[i] != x[idx[i]];
    CHECK_MSG(bad == 0, "gather: %zu wrong", bad);
    /* Without the flag, differing shapes are a mismatch. */
    kiln_elementwise *strict = NULL;
    CHECK_OK(
        kiln_elementwise_create(c,
                                &KILN_ELEMENTWISE_DESC("float *y, const int *idx, const float *x",
                                                       "y[i] = x[idx[i]]", "gather2", NULL, 0),
                                &strict));
    CHECK_STATUS(kiln_elementwise_launch(q, strict, n, 3, v, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    KT_RELEASE(strict, ew, X, I, Y);
}

static void t_errors(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_elementwise *ew = (kiln_elementwise *)1;
    CHECK_STATUS(kiln_elementwise_create(c,
                                         &KILN_ELEMENTWISE_DESC("const float *x, float *z",
                                                                "z[i] = x[i] +* no_such_var", "bad",
                                                                NULL, 0),
                                         &ew),
                 KILN_ERROR_BUILD);
    CHECK(ew == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "no_such_var") != NULL, "%s",
              kiln_last_error_message());
    CHECK_MSG(strstr(kiln_last_build_log(), "operation") != NULL, "log: %s", kiln_last_build_log());
    /* the core ends the log with the user's line under its label, on every
     * compiler (NVIDIA's OpenCL ignores #line: the core maps it back) */
    CHECK_MSG(strstr(kiln_last_build_log(), "operation:1: z[i] = x[i] +* no_such_var") != NULL,
              "log: %s", kiln_last_build_log());
    CHECK_STATUS(
        kiln_elementwise_create(c, &KILN_ELEMENTWISE_DESC("float", "x", NULL, NULL, 0), &ew),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(
        kiln_elementwise_create(c, &KILN_ELEMENTWISE_DESC("float a", "a", NULL, NULL, 0), &ew),
        KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_create(
                     c, &KILN_ELEMENTWISE_DESC("float *x, float *x", "x[i]=0", NULL, NULL, 0), &ew),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_create(
                     c, &KILN_ELEMENTWISE_DESC("float *x", "x[i]=0", "9bad", NULL, 0), &ew),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_create(
                     NULL, &KILN_ELEMENTWISE_DESC("float *x", "x[i]=0", NULL, NULL, 0), &ew),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_elementwise_create(
                     c, &KILN_ELEMENTWISE_DESC("float *x", "x[i]=0", NULL, NULL, 0), NULL),
                 KILN_ERROR_NULL_HANDLE);
    kiln_elementwise_release(NULL);

    CHECK_OK(kiln_elementwise_create(c,
                                     &KILN_ELEMENTWISE_DESC("float a, const float *x, float *z",
                                                            "z[i] = a*x[i]", "scale", NULL, 0),
                                     &ew));
    size_t n = 100, m = 101;
    kiln_array *f = NULL, *g = NULL, *h = NULL, *iarr = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &f));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &g));
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &m, &h));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &iarr));
    kiln_arg wrong_dtype[3] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(iarr), KILN_ARG_ARRAY(g) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, wrong_dtype, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    kiln_arg wrong_shape[3] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(f), KILN_ARG_ARRAY(h) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, wrong_shape, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    kiln_arg ok[3] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(f), KILN_ARG_ARRAY(g) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 2, ok, 0, NULL, NULL), KILN_ERROR_KERNEL_ARGS);
    kiln_arg swapped[3] = { KILN_ARG_ARRAY(f), KILN_ARG_F32(1), KILN_ARG_ARRAY(g) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, swapped, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_STATUS(kiln_elementwise_launch(NULL, ew, n, 3, ok, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_elementwise_launch(q, NULL, n, 3, ok, 0, NULL, NULL), KILN_ERROR_NULL_HANDLE);
    /* An array of another context. */
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *c2 = NULL;
    if (CHECK_OK(kiln_context_create(&dev, 1, &c2))) {
        kiln_array *other = NULL;
        CHECK_OK(kiln_array_empty(c2, KILN_FLOAT32, 1, &n, &other));
        kiln_arg foreign[3] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(other), KILN_ARG_ARRAY(g) };
        CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, foreign, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        KT_RELEASE(other, c2);
    }
    /* the range: n past the arrays' end, or short of it, is a mismatch */
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n + 1, 3, ok, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n - 1, 3, ok, 0, NULL, NULL), KILN_ERROR_MISMATCH);
    kiln_arg nul[3] = { KILN_ARG_F32(1), KILN_ARG_ARRAY(NULL), KILN_ARG_ARRAY(g) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, nul, 0, NULL, NULL), KILN_ERROR_KERNEL_ARGS);
    kiln_arg buf[3] = { KILN_ARG_F32(1), KILN_ARG_BUF(kiln_array_buffer(f)), KILN_ARG_ARRAY(g) };
    CHECK_STATUS(kiln_elementwise_launch(q, ew, n, 3, buf, 0, NULL, NULL), KILN_ERROR_KERNEL_ARGS);
    KT_RELEASE(ew, f, g, h, iarr);
}

/* Descriptors, names, flags, retain, and n = 0. */
static void t_api(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_elementwise_desc d =
        KILN_ELEMENTWISE_DESC(.arguments = "const int *x, int *y", .operation = "y[i] = x[i] + 1");
    kiln_elementwise *ew = (kiln_elementwise *)1;
    kiln_elementwise_desc raw = d;
    raw.struct_size = 0; /* not made with the macro */
    CHECK_STATUS(kiln_elementwise_create(c, &raw, &ew), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(ew == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "KILN_ELEMENTWISE_DESC"), "%s",
              kiln_last_error_message());
    CHECK_STATUS(kiln_elementwise_create(c, NULL, &ew), KILN_ERROR_NULL_HANDLE);
    raw = d;
    raw.flags = 0x80;
    CHECK_STATUS(kiln_elementwise_create(c, &raw, &ew), KILN_ERROR_INVALID_ARGUMENT);
    raw.flags = 1u << 16; /* kiln's internal no-alias bit: not for users */
    CHECK_STATUS(kiln_elementwise_create(c, &raw, &ew), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(ew == NULL);
    raw.flags = 1u << 17; /* the internal lanes bit (kiln's own operators) */
    CHECK_STATUS(kiln_elementwise_create(c, &raw, &ew), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(ew == NULL);
    /* a 200-character name: a clear error, no overflow of a kernel name */
    char longname[201];
    kt_long_name(longname, sizeof longname, 'n');
    raw = d;
    raw.name = longname;
    CHECK_STATUS(kiln_elementwise_create(c, &raw, &ew), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "63"), "%s", kiln_last_error_message());
    longname[63] = 0; /* the longest allowed */
    raw.name = longname;
    ew = NULL;
    if (!CHECK_OK(kiln_elementwise_create(c, &raw, &ew)))
        return;
    CHECK_OK(kiln_elementwise_retain(ew));
    kiln_elementwise_release(ew);
    CHECK_STATUS(kiln_elementwise_retain(NULL), KILN_ERROR_NULL_HANDLE);
    size_t n = 5, zero = 0;
    int x[5] = { 1, 2, 3, 4, 5 }, y[5] = { 0 };
    kiln_array *X = NULL, *Y = NULL, *E0 = NULL, *E1 = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, x, &X));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Y));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &E0));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &zero, &E1));
    kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Y) };
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, v, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, Y, y));
    CHECK_MSG(y[0] == 2 && y[4] == 6, "long name kernel: %d %d", y[0], y[4]);
    /* n = 0: nothing runs; the event completes after the wait list */
    kiln_arg ve[2] = { KILN_ARG_ARRAY(E0), KILN_ARG_ARRAY(E1) };
    kiln_event *e0 = NULL, *e1 = NULL;
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, v, 0, NULL, &e0));
    if (CHECK_OK(kiln_elementwise_launch(q, ew, 0, 2, ve, 1, &e0, &e1))) {
        CHECK_OK(kiln_event_wait(e1));
        kiln_event_state st = KILN_EVENT_QUEUED;
        CHECK_OK(kiln_event_get_state(e0, &st));
        CHECK(st == KILN_EVENT_COMPLETE);
    }
    KT_RELEASE(e0, e1, ew);
    /* ANY_SHAPE: a range shorter than the arrays, indexed within bounds */
    ew = NULL;
    d.operation = "y[i] = x[n - 1 - i]";
    d.flags = KILN_ELEMENTWISE_ANY_SHAPE;
    if (CHECK_OK(kiln_elementwise_create(c, &d, &ew))) {
        int yy[5] = { 0, 0, 0, 0, 0 };
        CHECK_OK(kiln_array_write(q, Y, yy));
        CHECK_OK(kiln_elementwise_launch(q, ew, 3, 2, v, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, Y, y));
        CHECK_MSG(y[0] == 3 && y[1] == 2 && y[2] == 1 && y[3] == 0 && y[4] == 0,
                  "any shape: %d %d %d %d %d", y[0], y[1], y[2], y[3], y[4]);
        /* a strided first array (indexed at i, as every strided view)
         * still has exactly n elements */
        kiln_array *rev = NULL;
        kiln_elementwise *ew2 = NULL;
        kiln_slice sl = KILN_SLICE_REVERSED;
        d.operation = "y[i] = 10 * x[i]";
        d.name = "any_strided";
        if (CHECK_OK(kiln_array_view(X, &sl, &rev)) &&
            CHECK_OK(kiln_elementwise_create(c, &d, &ew2))) {
            kiln_arg vr[2] = { KILN_ARG_ARRAY(rev), KILN_ARG_ARRAY(Y) };
            CHECK_STATUS(kiln_elementwise_launch(q, ew2, 3, 2, vr, 0, NULL, NULL),
                         KILN_ERROR_MISMATCH);
            CHECK_OK(kiln_elementwise_launch(q, ew2, n, 2, vr, 0, NULL, NULL));
            CHECK_OK(kiln_array_read(q, Y, y));
            CHECK_MSG(y[0] == 50 && y[4] == 10, "any shape, strided: %d %d", y[0], y[4]);
        }
        KT_RELEASE(ew2, rev);
    }
    KT_RELEASE(ew, X, Y, E0, E1);
}

/* Arrays (and the kernel) released right after the launch: the queued work
 * must still see them. */
static void t_release_in_flight(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = (1u << 20) + 7;
    int *x = malloc(n * sizeof *x), *z = malloc(n * sizeof *z);
    for (size_t i = 0; i < n; i++)
        x[i] = (int)(i % 1000);
    kiln_array *X = NULL, *Z = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &n, x, &X));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &Z));
    kiln_elementwise *ew = NULL;
    CHECK_OK(kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC("const int *x, int *z", "z[i] = x[i] * 3 + 1", "inflight", NULL, 0),
        &ew));
    kiln_event *e = NULL, *r = NULL;
    kiln_arg v[2] = { KILN_ARG_ARRAY(X), KILN_ARG_ARRAY(Z) };
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, v, 0, NULL, &e));
    KT_RELEASE(X, ew);
    CHECK_OK(kiln_array_read_async(q, Z, z, 1, &e, &r));
    kiln_array_release(Z);
    CHECK_OK(kiln_event_wait(r));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += z[i] != x[i] * 3 + 1;
    CHECK_MSG(bad == 0, "in flight: %zu wrong", bad);
    KT_RELEASE(e, r);
    KT_FREE(x, z);
}

/* Generators of the three kinds and the built-ins' cached ones, released
 * in odd orders: the context and its queue before the generators, a
 * generator while its launch is queued, the cache going with the last
 * queue while user generators live on. Under ASan: no leak, no use after
 * free. */
static void t_release_orders(kiln_queue *q0) {
    kiln_device *dev = kiln_queue_device(q0);
    for (int order = 0; order < 2; order++) {
        kiln_context *c = NULL;
        kiln_queue *q = NULL;
        if (!KT_OPEN_QUEUE(dev, 0, &c, &q))
            return;
        kiln_elementwise *ew = NULL;
        kiln_reduction *red = NULL;
        kiln_scan *sc = NULL;
        kiln_elementwise_desc ed =
            KILN_ELEMENTWISE_DESC(.arguments = "const int *x, int *y", .operation = "y[i] = 2*x[i]",
                                  .name = "rel_ew");
        kiln_reduction_desc rd =
            KILN_REDUCTION_DESC(.arguments = "const int *x", .out_type = "int", .neutral = "0",
                                .reduce = "a+b", .map = "x[i]", .name = "rel_red");
        kiln_scan_desc sd = KILN_SCAN_DESC(.arguments = "const int *x, int *y", .scan_type = "int",
                                           .neutral = "0", .scan = "a+b", .input = "x[i]",
                                           .output = "y[i] = item", .name = "rel_scan");
        CHECK_OK(kiln_elementwise_create(c, &ed, &ew));
        CHECK_OK(kiln_reduction_create(c, &rd, &red));
        CHECK_OK(kiln_scan_create(c, &sd, &sc));
        size_t n = 1000;
        kiln_array *x = NULL, *y = NULL;
        CHECK_OK(kiln_array_zeros(q, KILN_INT32, 1, &n, 0, NULL, NULL, &x));
        CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &n, &y));
        kiln_arg v[2] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y) };
        int sum = -1;
        kiln_event *e = NULL;
        if (ew && red && sc && x && y) {
            /* built-ins: their generators go into the context's cache */
            CHECK_OK(kiln_array_cumsum_out(q, y, x, 0, 0, NULL, NULL));
            CHECK_OK(kiln_array_reduce(q, KILN_REDUCE_SUM, x, &sum));
            CHECK_OK(kiln_scan_launch(q, sc, n, 2, v, 0, NULL, NULL));
            CHECK_OK(kiln_reduction_run(q, red, n, 1, v, &sum));
            CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, v, 0, NULL, &e));
        }
        CHECK(sum == 0);
        if (order == 0) {
            /* handles first (the cache goes), the generators last */
            KT_RELEASE(c, x, y);
            if (e)
                CHECK_OK(kiln_event_wait(e));
            KT_RELEASE(q, e, sc, ew, red);
        } else {
            /* generators first, while the launch may still be queued */
            KT_RELEASE(ew, red, sc, q, y, c);
            if (e)
                CHECK_OK(kiln_event_wait(e));
            KT_RELEASE(e, x);
        }
    }
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(t_axpy_all_dtypes, t_strided, t_gather, t_errors, t_api,
                             t_release_in_flight, t_release_orders);
    return kt_report();
}
