/* Property tests of kiln's shape logic against NumPy 2 (issue 41, item 16):
 * random cases from a fixed seed, NumPy's answers checked in as
 * tests/numpy_shapes.h (scripts/gen-numpy-tables.py --shapes; the NumPy
 * version is NP_SHAPES_NUMPY_VERSION, printed below):
 *
 *   - broadcasting: kiln_shape_broadcast against np.broadcast_shapes
 *     (ranks 0..5, sizes 0..3), the result or the refusal;
 *   - views: two slicings in a row (kiln_array_view of a view) against
 *     a[s][t], with negative, out-of-range and extreme (PTRDIFF_MIN/MAX)
 *     bounds and steps: shape, strides and offset;
 *   - reshape of a C-order array: accepted exactly when NumPy accepts it,
 *     with NumPy's strides;
 *   - permute (transpose with axes, negative ones too): shape and strides,
 *     or the refusal (an axis out of range: KILN_ERROR_OUT_OF_RANGE, as
 *     NumPy's AxisError; a repeated axis: KILN_ERROR_INVALID_ARGUMENT, as
 *     its ValueError);
 *   - axis arguments: kiln_array_reduce_axis(SUM, axis -ndim-2..ndim+1,
 *     keepdims 0/1) against a.sum(axis, keepdims): the result's shape, or
 *     KILN_ERROR_OUT_OF_RANGE where NumPy raises AxisError;
 *   - stride validation: kiln_array_from_buffer with negative and zero
 *     strides and an offset is accepted exactly when every element lies in
 *     the buffer (NumPy's byte_bounds of the same as_strided view).
 *
 * Promotion of every dtype pair (and of arrays with Python scalars) is
 * checked against NumPy by tests/test_array_dtype.c (tests/numpy_tables.h:
 * all 14 x 14 pairs). Strides are compared only where they mean something:
 * for dimensions longer than 1 of non-empty results (NumPy keeps arbitrary
 * strides there; kiln too, and neither reads them). */
#include <stdio.h>
#include <string.h>

#include "harness.h"
#include "numpy_shapes.h"

#define COUNT(t) (sizeof(t) / sizeof((t)[0]))

static void fmt_shape(char *buf, size_t cap, unsigned nd, const size_t *s) {
    size_t at = (size_t)snprintf(buf, cap, "(");
    for (unsigned i = 0; i < nd && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%zu%s", s[i], i + 1 < nd ? ", " : "");
    if (at < cap)
        snprintf(buf + at, cap - at, ")");
}

static void test_broadcast(void) {
    size_t bad = 0;
    for (size_t k = 0; k < COUNT(np_bcast); k++) {
        unsigned nd = 99;
        size_t shape[KILN_ARRAY_MAX_DIMS] = { 0 };
        kiln_status st = kiln_shape_broadcast(np_bcast[k].na, np_bcast[k].a, np_bcast[k].nb,
                                              np_bcast[k].b, &nd, shape);
        int ok = np_bcast[k].ok ? st == KILN_OK && nd == np_bcast[k].nr &&
                                      !memcmp(shape, np_bcast[k].r, nd * sizeof(size_t))
                                : st == KILN_ERROR_MISMATCH;
        if (!ok && bad++ < 10) {
            char a[80], b[80], r[80];
            fmt_shape(a, sizeof a, np_bcast[k].na, np_bcast[k].a);
            fmt_shape(b, sizeof b, np_bcast[k].nb, np_bcast[k].b);
            fmt_shape(r, sizeof r, st == KILN_OK ? nd : 0, shape);
            CHECK_MSG(0, "broadcast %s with %s: status %d, %s; NumPy %s", a, b, (int)st, r,
                      np_bcast[k].ok ? "broadcasts" : "raises");
        }
    }
    CHECK_MSG(bad == 0, "%zu of %zu broadcasts differ from NumPy", bad, COUNT(np_bcast));
    printf("broadcast: %zu cases\n", COUNT(np_bcast));
}

/* Shape, strides (where they mean something) and offset of info against
 * NumPy's. */
static int same_layout(const kiln_array_info *info, unsigned nd, const size_t *shape,
                       const ptrdiff_t *strides, size_t offset, int with_offset) {
    if (info->ndim != nd)
        return 0;
    size_t size = 1;
    for (unsigned d = 0; d < nd; d++) {
        if (info->shape[d] != shape[d])
            return 0;
        size *= shape[d];
    }
    if (!size)
        return info->size == 0;
    for (unsigned d = 0; d < nd; d++)
        if (shape[d] > 1 && info->strides[d] != strides[d])
            return 0;
    return !with_offset || info->offset == offset;
}

static void test_views(kiln_context *ctx) {
    size_t bad = 0;
    for (size_t k = 0; k < COUNT(np_view); k++) {
        kiln_array *a = NULL, *v1 = NULL, *v = NULL;
        unsigned nd = np_view[k].nd;
        kiln_slice s[4], t[4];
        for (unsigned d = 0; d < nd; d++) {
            s[d] = KILN_SLICE(np_view[k].s[d][0], np_view[k].s[d][1], np_view[k].s[d][2]);
            t[d] = KILN_SLICE(np_view[k].t[d][0], np_view[k].t[d][1], np_view[k].t[d][2]);
        }
        kiln_array_info info;
        int ok =
            kiln_array_empty(ctx, KILN_FLOAT32, nd, np_view[k].shape, &a) == KILN_OK &&
            kiln_array_view(a, s, &v1) == KILN_OK && kiln_array_view(v1, t, &v) == KILN_OK &&
            kiln_array_get_info(v, &info) == KILN_OK &&
            same_layout(&info, nd, np_view[k].vshape, np_view[k].vstrides, np_view[k].voffset, 1);
        if (!ok && bad++ < 10) {
            char sh[80], want[80];
            fmt_shape(sh, sizeof sh, nd, np_view[k].shape);
            fmt_shape(want, sizeof want, nd, np_view[k].vshape);
            CHECK_MSG(0, "view case %zu of %s: NumPy gives %s offset %zu (%s)", k, sh, want,
                      np_view[k].voffset, v ? "kiln's layout differs" : kiln_last_error_message());
        }
        KT_RELEASE(v, v1, a);
    }
    CHECK_MSG(bad == 0, "%zu of %zu double slicings differ from NumPy", bad, COUNT(np_view));
    printf("views: %zu cases (two slicings each)\n", COUNT(np_view));
}

static kiln_dtype dtype_of_size(size_t item) {
    switch (item) {
    case 1:
        return KILN_INT8;
    case 2:
        return KILN_INT16;
    case 4:
        return KILN_FLOAT32;
    case 8:
        return KILN_FLOAT64;
    default:
        return KILN_COMPLEX128;
    }
}

static void test_strided(kiln_context *ctx) {
    size_t bad = 0, skipped = 0;
    for (size_t k = 0; k < COUNT(np_strided); k++) {
        kiln_buffer *b = NULL;
        kiln_array *a = NULL;
        if (np_strided[k].bufsize == 0) { /* no buffer of 0 bytes to build on */
            skipped++;
            continue;
        }
        if (!CHECK_OK(kiln_buffer_create(ctx, np_strided[k].bufsize, 0, NULL, &b)))
            continue;
        kiln_status st = kiln_array_from_buffer(
            b, np_strided[k].offset, dtype_of_size(np_strided[k].itemsize), np_strided[k].nd,
            np_strided[k].shape, np_strided[k].strides, &a);
        int ok = np_strided[k].inside ? st == KILN_OK : st == KILN_ERROR_OUT_OF_RANGE;
        if (!ok && bad++ < 10) {
            char sh[80];
            fmt_shape(sh, sizeof sh, np_strided[k].nd, np_strided[k].shape);
            const ptrdiff_t *x = np_strided[k].strides;
            CHECK_MSG(0,
                      "from_buffer %s strides {%td, %td, %td, %td} of %zu-byte items at offset %zu "
                      "of %zu bytes: status %d; NumPy's bounds %s",
                      sh, x[0], x[1], x[2], x[3], np_strided[k].itemsize, np_strided[k].offset,
                      np_strided[k].bufsize, (int)st,
                      np_strided[k].inside ? "lie inside" : "reach outside");
        }
        KT_RELEASE(a, b);
    }
    CHECK_MSG(bad == 0, "%zu of %zu strided layouts judged unlike NumPy", bad,
              COUNT(np_strided) - skipped);
    printf("strided: %zu cases (%zu with a 0-byte buffer left out)\n", COUNT(np_strided) - skipped,
           skipped);
}

static void test_reshape(kiln_context *ctx) {
    size_t bad = 0;
    for (size_t k = 0; k < COUNT(np_reshape); k++) {
        kiln_array *a = NULL, *v = NULL;
        kiln_array_info info;
        kiln_status st = KILN_ERROR_INVALID_ARGUMENT;
        int ok = kiln_array_empty(ctx, KILN_FLOAT32, np_reshape[k].nd, np_reshape[k].shape, &a) ==
                 KILN_OK;
        if (ok) {
            st = kiln_array_reshape(a, np_reshape[k].nn, np_reshape[k].nshape, &v);
            ok = np_reshape[k].ok ? st == KILN_OK && kiln_array_get_info(v, &info) == KILN_OK &&
                                        same_layout(&info, np_reshape[k].nn, np_reshape[k].nshape,
                                                    np_reshape[k].strides, 0, 1)
                                  : st != KILN_OK;
        }
        if (!ok && bad++ < 10) {
            char from[80], to[80];
            fmt_shape(from, sizeof from, np_reshape[k].nd, np_reshape[k].shape);
            fmt_shape(to, sizeof to, np_reshape[k].nn, np_reshape[k].nshape);
            CHECK_MSG(0, "reshape %s to %s: status %d; NumPy %s", from, to, (int)st,
                      np_reshape[k].ok ? "accepts it" : "raises");
        }
        KT_RELEASE(v, a);
    }
    CHECK_MSG(bad == 0, "%zu of %zu reshapes differ from NumPy", bad, COUNT(np_reshape));
    printf("reshape: %zu cases\n", COUNT(np_reshape));
}

static void test_axis(kiln_queue *q) {
    size_t bad = 0;
    for (size_t k = 0; k < COUNT(np_axis); k++) {
        kiln_array *a = NULL, *o = NULL;
        kiln_event *e = NULL;
        kiln_array_info info;
        kiln_status st = KILN_ERROR_INVALID_ARGUMENT;
        float zero = 0;
        int ok = kiln_array_full(q, KILN_FLOAT32, np_axis[k].nd, np_axis[k].shape,
                                 KILN_ARG_F32(zero), 0, NULL, NULL, &a) == KILN_OK;
        if (ok) {
            st = kiln_array_reduce_axis(q, KILN_REDUCE_SUM, a, np_axis[k].axis, np_axis[k].keepdims,
                                        0, NULL, &e, &o);
            if (st == KILN_OK)
                st = kiln_event_wait(e);
            ok = np_axis[k].ok
                     ? st == KILN_OK && kiln_array_get_info(o, &info) == KILN_OK &&
                           info.ndim == np_axis[k].rn &&
                           !memcmp(info.shape, np_axis[k].rshape, np_axis[k].rn * sizeof(size_t))
                     : st == KILN_ERROR_OUT_OF_RANGE;
        }
        if (ok && st == KILN_OK && info.size) { /* the sums of zeros */
            float h[1024];                      /* at most 5^4 */
            ok = info.size <= 1024 && kiln_array_read(q, o, h) == KILN_OK;
            for (size_t i = 0; ok && i < info.size; i++)
                ok = h[i] == 0;
        }
        if (!ok && bad++ < 10) {
            char sh[80];
            fmt_shape(sh, sizeof sh, np_axis[k].nd, np_axis[k].shape);
            CHECK_MSG(0, "sum of %s along axis %d (keepdims %d): status %d; NumPy %s", sh,
                      np_axis[k].axis, np_axis[k].keepdims, (int)st,
                      np_axis[k].ok ? "accepts it" : "raises AxisError");
        }
        KT_RELEASE(e, o, a);
    }
    CHECK_MSG(bad == 0, "%zu of %zu axis reductions differ from NumPy", bad, COUNT(np_axis));
    printf("axis: %zu cases\n", COUNT(np_axis));
}

static void test_permute(kiln_context *ctx) {
    size_t bad = 0, k;
    for (k = 0; k < COUNT(np_permute); k++) {
        kiln_array *v = NULL;
        kiln_array *a = NULL;
        kiln_status st =
            kiln_array_empty(ctx, KILN_FLOAT32, np_permute[k].nd, np_permute[k].shape, &a);
        kiln_array_info info;
        int ok = st == KILN_OK;
        if (ok) {
            st = kiln_array_permute(a, np_permute[k].axes, &v);
            kiln_status want = np_permute[k].ok == 1   ? KILN_OK
                               : np_permute[k].ok == 0 ? KILN_ERROR_OUT_OF_RANGE
                                                       : KILN_ERROR_INVALID_ARGUMENT;
            ok = st == want &&
                 (st != KILN_OK || (kiln_array_get_info(v, &info) == KILN_OK &&
                                    same_layout(&info, np_permute[k].nd, np_permute[k].pshape,
                                                np_permute[k].pstrides, 0, 1)));
        }
        if (!ok && bad++ < 10) {
            char sh[80];
            fmt_shape(sh, sizeof sh, np_permute[k].nd, np_permute[k].shape);
            const int *x = np_permute[k].axes;
            CHECK_MSG(0, "permute %s by {%d, %d, %d, %d, %d}: status %d; NumPy %s", sh, x[0], x[1],
                      x[2], x[3], x[4], (int)st,
                      np_permute[k].ok == 1   ? "accepts it"
                      : np_permute[k].ok == 0 ? "raises AxisError"
                                              : "raises ValueError (repeated axis)");
        }
        KT_RELEASE(v, a);
    }
    CHECK_MSG(bad == 0, "%zu of %zu permutations differ from NumPy", bad, COUNT(np_permute));
    printf("permute: %zu cases\n", COUNT(np_permute));
}

static void on_device(kiln_queue *q, void *user) {
    (void)user;
    void (*const on_context[])(kiln_context *) = { test_views, test_reshape, test_permute,
                                                   test_strided };
    for (size_t i = 0; i < COUNT(on_context); i++)
        on_context[i](kiln_queue_context(q));
    test_axis(q);
}

int main(void) {
    printf("NumPy %s's answers (tests/numpy_shapes.h)\n", NP_SHAPES_NUMPY_VERSION);
    test_broadcast();
    kt_for_each_device(on_device, NULL);
    return kt_report();
}
