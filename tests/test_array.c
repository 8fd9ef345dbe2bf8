/* kiln_array: creation, views, transfers (contiguous and strided), fill,
 * copy (same context and between contexts), operators, bad input; the
 * settled API: wait lists of the filling constructors and transfers, the
 * dimension limit (8 slots in the ABI, 3 supported), the sized info. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *c = kiln_queue_context(q);
    size_t n = 1025;
    kiln_array *a = NULL, *b = NULL, *z = NULL, *v = NULL, *cmp = NULL;
    float ha[1025], hz[1025];
    CHECK_OK(kiln_array_arange(q, KILN_FLOAT32, n, 1.0, 0.5, 0, NULL, NULL, &a));
    CHECK_OK(kiln_array_read(q, a, ha));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += ha[i] != 1.0f + 0.5f * (float)i;
    CHECK_MSG(bad == 0, "arange: %zu wrong", bad);
    float seven = 7;
    CHECK_OK(kiln_array_full(q, KILN_FLOAT32, 1, &n, KILN_ARG_F32(seven), 0, NULL, NULL, &b));
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &z));
    /* fill a strided view: every third element of z = -1 */
    kiln_slice s = KILN_SLICE(0, PTRDIFF_MAX, 3);
    CHECK_OK(kiln_array_view(z, &s, &v));
    CHECK(kiln_array_size(v) == 342);
    float m1 = -1;
    CHECK_OK(kiln_array_fill(q, v, KILN_ARG_F32(m1), 0, NULL, NULL));
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
    CHECK_OK(kiln_array_binary_out(q, KILN_OP_MUL, z, a, b, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != ha[i] * 7;
    CHECK_MSG(bad == 0, "mul: %zu wrong", bad);
    CHECK_OK(
        kiln_array_binary_scalar_out(q, KILN_OP_MAX, z, a, KILN_ARG_F64(100.0), 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != (ha[i] > 100 ? ha[i] : 100);
    CHECK_MSG(bad == 0, "max scalar: %zu wrong", bad);
    CHECK_OK(kiln_array_unary_out(q, KILN_OP_SQRT, z, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, z, hz));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += fabsf(hz[i] - sqrtf(ha[i])) > 1e-6f * sqrtf(ha[i]);
    CHECK_MSG(bad == 0, "sqrt: %zu wrong", bad);
    CHECK_OK(kiln_array_empty(c, KILN_UINT8, 1, &n, &cmp));
    CHECK_OK(
        kiln_array_binary_scalar_out(q, KILN_OP_LT, cmp, a, KILN_ARG_F64(50.0), 0, NULL, NULL));
    uint8_t hc[1025];
    CHECK_OK(kiln_array_read(q, cmp, hc));
    bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hc[i] != (ha[i] < 50);
    CHECK_MSG(bad == 0, "lt: %zu wrong", bad);
    /* integer division by zero gives 0, never a trap */
    int32_t hi[5] = { 7, -8, 9, 10, -2147483647 - 1 }, hd[5] = { 2, 0, -1, 3, -1 }, ho[5];
    size_t five = 5;
    kiln_array *ia = NULL, *id = NULL, *io = NULL;
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &five, hi, &ia));
    CHECK_OK(kiln_array_from_host(c, KILN_INT32, 1, &five, hd, &id));
    CHECK_OK(kiln_array_empty(c, KILN_INT32, 1, &five, &io));
    CHECK_OK(kiln_array_binary_out(q, KILN_OP_DIV, io, ia, id, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, io, ho));
    CHECK(ho[0] == 3 && ho[1] == 0 && ho[2] == -9 && ho[3] == 3 &&
          ho[4] == (int32_t)(-2147483647 - 1));
    /* copy and copy_between (a second context on the same device) */
    CHECK_OK(kiln_array_copy_out(q, z, a, 0, NULL, NULL));
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
        CHECK_STATUS(kiln_array_copy_out(q, o, a, 0, NULL, NULL), KILN_ERROR_MISMATCH);
        kiln_array_release(o);
    }
    KT_RELEASE(q2, c2);
    /* reshape, bad input */
    size_t s2[2] = { 25, 41 };
    kiln_array *r2 = NULL;
    CHECK_OK(kiln_array_reshape(a, 2, s2, &r2));
    kiln_array_info info;
    CHECK_OK(kiln_array_get_info(r2, &info));
    CHECK(info.ndim == 2 && info.shape[0] == 25 && info.strides[0] == 41);
    size_t s3[2] = { 25, 40 };
    kiln_array *bad_view = NULL;
    CHECK_STATUS(kiln_array_reshape(a, 2, s3, &bad_view), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_reshape(v, 1, &n, &bad_view), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, z, a, ia, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_binary_out(q, KILN_OP_ADD, cmp, a, b, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_array_unary_out(q, KILN_OP_SQRT, io, ia, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_slice zero_step = KILN_SLICE(0, 10, 0);
    CHECK_STATUS(kiln_array_view(a, &zero_step, &bad_view), KILN_ERROR_INVALID_ARGUMENT);
    size_t four = 4;
    CHECK_STATUS(kiln_array_empty(c, (kiln_dtype)99, 1, &four, &bad_view),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(bad_view == NULL);
    size_t zero = 0;
    kiln_array *e0 = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &zero, &e0));
    CHECK_OK(kiln_array_read(q, e0, hz));
    kiln_array_release(e0);
    kiln_array_release(NULL);
    KT_RELEASE(r2, ia, id, io, a, b, z, v, cmp);
}

/* zeros / full / arange and the transfers wait for their wait lists: gated
 * by a user event, nothing completes until it opens. */
static void t_wait_lists(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    size_t n = 300, shape2[2] = { 20, 15 };
    kiln_event *gate = NULL, *ez = NULL, *ef = NULL, *ea = NULL;
    kiln_array *z = NULL, *f = NULL, *a = NULL;
    float seven = 7, hz[300], hf[300], ha[300];
    if (!CHECK_OK(kiln_event_create_user(c, &gate)))
        return;
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 2, shape2, 1, &gate, &ez, &z));
    CHECK_OK(kiln_array_full(q, KILN_FLOAT32, 1, &n, KILN_ARG_F32(seven), 1, &gate, &ef, &f));
    CHECK_OK(kiln_array_arange(q, KILN_FLOAT32, n, 3.0, 2.0, 1, &gate, &ea, &a));
    usleep(50 * 1000);
    CHECK_MSG(!kt_event_done(ez) && !kt_event_done(ef) && !kt_event_done(ea),
              "a constructor ran before its wait list");
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    kiln_event *all[3] = { ez, ef, ea };
    CHECK_OK(kiln_event_wait_all(3, all));
    CHECK_OK(kiln_array_read(q, z, hz));
    CHECK_OK(kiln_array_read(q, f, hf));
    CHECK_OK(kiln_array_read(q, a, ha));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += hz[i] != 0 || hf[i] != 7 || ha[i] != 3.0f + 2.0f * (float)i;
    CHECK_MSG(bad == 0, "gated constructors: %zu wrong", bad);
    for (int k = 0; k < 3; k++)
        kiln_event_release(all[k]);
    kiln_event_release(gate);

    /* a strided write and read (dense temporary + copy kernel) behind a
     * gate: the host data stays as it was until the gate opens */
    kiln_array *v = NULL;
    kiln_slice every2 = KILN_SLICE(0, PTRDIFF_MAX, 2);
    float w[150], r[150];
    for (size_t i = 0; i < 150; i++) {
        w[i] = (float)i * 0.25f;
        r[i] = -1;
    }
    kiln_event *ew = NULL, *er = NULL;
    if (CHECK_OK(kiln_array_view(f, &every2, &v)) && CHECK_OK(kiln_event_create_user(c, &gate))) {
        CHECK_OK(kiln_array_write_async(q, v, w, 1, &gate, &ew));
        CHECK_OK(kiln_array_read_async(q, v, r, 1, &ew, &er));
        usleep(50 * 1000);
        CHECK_MSG(!kt_event_done(ew) && !kt_event_done(er) && r[3] == -1,
                  "a transfer ran before its wait list");
        CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
        CHECK_OK(kiln_event_wait(er));
        CHECK(memcmp(w, r, sizeof w) == 0);
        CHECK_OK(kiln_array_read(q, f, hf));
        CHECK(hf[0] == 0 && hf[1] == 7 && hf[2] == 0.25f && hf[299] == 7);
        KT_RELEASE(ew, er, gate);
    }
    kiln_array_release(v);

    /* a NULL wait list: the status, no array, no event */
    kiln_array *bad_a = (kiln_array *)&bad_a;
    kiln_event *bad_e = (kiln_event *)&bad_e;
    CHECK_STATUS(kiln_array_zeros(q, KILN_FLOAT32, 1, &n, 1, NULL, &bad_e, &bad_a),
                 KILN_ERROR_NULL_HANDLE);
    CHECK(bad_a == NULL && bad_e == NULL);
    bad_a = (kiln_array *)&bad_a;
    CHECK_STATUS(kiln_array_arange(q, KILN_FLOAT32, n, 0, 1, 1, NULL, NULL, &bad_a),
                 KILN_ERROR_NULL_HANDLE);
    CHECK(bad_a == NULL);
    /* a value that is not a scalar */
    CHECK_STATUS(kiln_array_full(q, KILN_FLOAT32, 1, &n, KILN_ARG_BUF(NULL), 0, NULL, NULL, &bad_a),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(bad_a == NULL && strstr(kiln_last_error_message(), "kiln_array_full") &&
          strstr(kiln_last_error_message(), "not a scalar"));
    CHECK_STATUS(kiln_array_zeros(NULL, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &bad_a),
                 KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(z, f, a);
}

/* KILN_ARRAY_MAX_DIMS (8) dimensions, 0-d arrays too (tests/test_array_rank.c
 * runs every operation at every rank). */
static void t_dims(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    CHECK(KILN_ARRAY_MAX_DIMS == 8);
    size_t shape[9] = { 2, 3, 4, 5, 1, 1, 1, 1, 1 };
    for (unsigned nd = 0; nd <= 8; nd++) {
        kiln_array *x = NULL;
        if (CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, nd, shape, &x))) {
            size_t want = 1;
            for (unsigned d = 0; d < nd; d++)
                want *= shape[d];
            CHECK_MSG(kiln_array_size(x) == want, "%u-D size %zu", nd, kiln_array_size(x));
        }
        kiln_array_release(x);
    }
    kiln_array *x = NULL;
    float host[120] = { 0 };
    CHECK_OK(kiln_array_zeros(q, KILN_FLOAT32, 4, shape, 0, NULL, NULL, &x));
    kiln_array_release(x);
    CHECK_OK(kiln_array_full(q, KILN_FLOAT32, 5, shape, KILN_ARG_F32(host[0]), 0, NULL, NULL, &x));
    kiln_array_release(x);
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 4, shape, host, &x));
    kiln_array_release(x);
    /* a 0-d array: shape may be NULL */
    CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 0, NULL, host, &x));
    CHECK(kiln_array_size(x) == 1);
    kiln_array_release(x);
    /* not a count at all: invalid, as before */
    x = (kiln_array *)&x;
    CHECK_STATUS(kiln_array_empty(c, KILN_FLOAT32, 9, shape, &x), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(x == NULL);
    /* a 3-D array reshaped to 4-D */
    kiln_array *a3 = NULL, *v = NULL;
    if (!CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 3, shape, host, &a3)))
        return;
    size_t flat[4] = { 2, 3, 2, 2 };
    CHECK_OK(kiln_array_reshape(a3, 4, flat, &v));
    kiln_array_release(v);
    v = NULL;
    CHECK_OK(kiln_array_reshape(a3, 1, (size_t[]){ 24 }, &v));
    kiln_array_release(v);
    /* swapaxes: a dimension outside the array */
    CHECK_STATUS(kiln_array_swapaxes(a3, 0, 3, &v), KILN_ERROR_OUT_OF_RANGE);
    CHECK(v == NULL);
    CHECK_OK(kiln_array_swapaxes(a3, 0, 2, &v));

    /* the sized info: all 8 slots (unused: shape 1, stride 0), a newer
     * caller's tail zeroed, a size below any version refused */
    kiln_array_info info;
    memset(&info, 0xab, sizeof info);
    CHECK_OK(kiln_array_get_info(v, &info));
    CHECK(info.ndim == 3 && info.shape[0] == 4 && info.shape[2] == 2 && info.strides[0] == 1 &&
          info.strides[2] == 12 && !info.contiguous && info.size == 24 &&
          info.dtype == KILN_FLOAT32);
    int unused_ok = 1;
    for (unsigned d = 3; d < KILN_ARRAY_MAX_DIMS; d++)
        unused_ok &= info.shape[d] == 1 && info.strides[d] == 0;
    CHECK(unused_ok);
    struct {
        kiln_array_info info;
        uint64_t later[2];
    } big;
    memset(&big, 0xab, sizeof big);
    CHECK_OK((kiln_array_get_info)(a3, &big.info, sizeof big));
    CHECK(big.info.contiguous == 1 && big.later[0] == 0 && big.later[1] == 0);
    CHECK_STATUS((kiln_array_get_info)(a3, &info, 16), KILN_ERROR_INVALID_ARGUMENT);
    CHECK(strstr(kiln_last_error_message(), "kiln_array_get_info macro"));
    CHECK_STATUS((kiln_array_get_info)(a3, &info, 0), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_array_get_info(NULL, &info), KILN_ERROR_NULL_HANDLE);
    KT_RELEASE(v, a3);
}

static void per_device(kiln_queue *q, void *user) {
    run(q, user);
    t_wait_lists(q);
    t_dims(q);
}

int main(void) {
    kt_for_each_device(per_device, NULL);
    return kt_report();
}
