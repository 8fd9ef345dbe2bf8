/* kiln_array: creation, views, transfers (contiguous and strided), fill,
 * copy (same context and between contexts), operators, bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1025;
    kiln_array *a = NULL, *b = NULL, *z = NULL, *v = NULL, *cmp = NULL;
    float ha[1025], hz[1025];
    CHECK_OK(kiln_array_arange(q, KILN_FLOAT32, n, 1.0, 0.5, NULL, &a));
    CHECK_OK(kiln_array_read(q, a, ha));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += ha[i] != 1.0f + 0.5f * (float)i;
    CHECK_MSG(bad == 0, "arange: %zu wrong", bad);
    float seven = 7;
    CHECK_OK(kiln_array_full(q, KILN_FLOAT32, 1, &n, &seven, NULL, &b));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, NULL, &z));
    /* fill a strided view: every third element of z = -1 */
    kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, 3);
    CHECK_OK(kiln_array_view(z, &s, &v));
    CHECK(kiln_array_size(v) == 342);
    float m1 = -1;
    CHECK_OK(kiln_array_fill(q, v, &m1, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != (i % 3 == 0 ? -1.0f : 0.0f);
    CHECK_MSG(bad == 0, "strided fill: %zu wrong", bad);
    /* strided write and read round trip */
    float w[342], r[342];
    for (size_t i = 0; i < 342; i++)
        w[i] = (float)i;
    CHECK_OK(kiln_array_write(q, v, w));
    CHECK_OK(kiln_array_read(q, v, r));
    CHECK(memcmp(w, r, sizeof w) == 0);
    /* operators */
    CHECK_OK(kiln_array_binary(q, KILN_OP_MUL, z, a, b, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != ha[i] * 7;
    CHECK_MSG(bad == 0, "mul: %zu wrong", bad);
    CHECK_OK(kiln_array_binary_scalar(q, KILN_OP_MAX, z, a, 100.0, 0, NULL,
                                      NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != (ha[i] > 100 ? ha[i] : 100);
    CHECK_MSG(bad == 0, "max scalar: %zu wrong", bad);
    CHECK_OK(kiln_array_unary(q, KILN_OP_SQRT, z, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabsf(hz[i] - sqrtf(ha[i])) > 1e-6f * sqrtf(ha[i]);
    CHECK_MSG(bad == 0, "sqrt: %zu wrong", bad);
    CHECK_OK(kiln_array_empty(c, KILN_UINT8, 1, &n, &cmp));
    CHECK_OK(kiln_array_binary_scalar(q, KILN_OP_LT, cmp, a, 50.0, 0, NULL,
                                      NULL));
    uint8_t hc[1025];
    CHECK_OK(kiln_array_read(q, cmp, hc));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hc[i] != (ha[i] < 50);
    CHECK_MSG(bad == 0, "lt: %zu wrong", bad);
    /* integer division by zero gives 0, never a trap */
    int32_t hi[5] = {7, -8, 9, 10, -2147483647 - 1}, hd[5] = {2, 0, -1, 3, -1},
            ho[5];
    size_t five = 5;
    kiln_array *ia = NULL, *id = NULL, *io = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &five, hi, &ia));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &five, hd, &id));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &five, &io));
    CHECK_OK(kiln_array_binary(q, KILN_OP_DIV, io, ia, id, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, io, ho));
    CHECK(ho[0] == 3 && ho[1] == 0 && ho[2] == -9 && ho[3] == 3 &&
          ho[4] == (int32_t)(-2147483647 - 1));
    /* copy and copy_between (a second context on the same device) */
    CHECK_OK(kiln_array_copy(q, z, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    CHECK(memcmp(hz, ha, sizeof ha) == 0);
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *c2 = NULL;
    kiln_queue *q2 = NULL;
    if (CHECK_OK(kiln_context_create(&dev, 1, &c2)) &&
        CHECK_OK(kiln_queue_create(c2, dev, 0, &q2))) {
        kiln_array *o = NULL;
        CHECK_OK(kiln_array_empty(c2, KILN_FLOAT32, 1, &n, &o));
        CHECK_OK(kiln_array_copy_between(q2, o, q, a));
        memset(hz, 0, sizeof hz);
        CHECK_OK(kiln_array_read(q2, o, hz));
        CHECK(memcmp(hz, ha, sizeof ha) == 0);
        CHECK_STATUS(kiln_array_copy(q, o, a, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        kiln_array_release(o);
    }
    kiln_queue_release(q2);
    kiln_context_release(c2);
    /* reshape, bad input */
    size_t s2[2] = {25, 41};
    kiln_array *r2 = NULL;
    CHECK_OK(kiln_array_reshape(a, 2, s2, &r2));
    kiln_array_info info;
    CHECK_OK(kiln_array_get_info(r2, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 25 && info.strides[0] == 41);
    size_t s3[2] = {25, 40};
    kiln_array *bad_view = NULL;
    CHECK_STATUS(kiln_array_reshape(a, 2, s3, &bad_view), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_reshape(v, 1, &n, &bad_view), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary(q, KILN_OP_ADD, z, a, ia, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary(q, KILN_OP_ADD, cmp, a, b, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_unary(q, KILN_OP_SQRT, io, ia, 0, NULL, NULL),
                 KILN_ERROR_UNSUPPORTED);
    kiln_slice zero_step = KILN_SLICE(0, 10, 0);
    CHECK_STATUS(kiln_array_view(a, &zero_step, &bad_view),
                 KILN_ERROR_INVALID_ARGUMENT);
    size_t four = 4;
    CHECK_STATUS(kiln_array_empty(c, KILN_FLOAT32, 4, &four, &bad_view),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_empty(c, (kiln_dtype)99, 1, &four, &bad_view),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(bad_view == NULL);
    size_t zero = 0;
    kiln_array *e0 = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &e0));
    CHECK_OK(kiln_array_read(q, e0, hz));
    kiln_array_release(e0);
    kiln_array_release(NULL);
    kiln_array_release(r2);
    kiln_array_release(ia);
    kiln_array_release(id);
    kiln_array_release(io);
    kiln_array_release(a);
    kiln_array_release(b);
    kiln_array_release(z);
    kiln_array_release(v);
    kiln_array_release(cmp);
}

int main(void) {
    kt_for_each_device(run, NULL);
    return kt_report();
}
