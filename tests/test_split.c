/* One fission call (kiln_device_split: equally, by counts) and work split
 * across the devices of a context (kiln_elementwise_launch_split,
 * kiln_rng_uniform_split, kiln_split_weigh), on PoCL sub-devices: results
 * bit for bit those of one device (and of a serial loop), at awkward sizes,
 * with weights that leave parts empty; bad input. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static void run(kiln_queue *q0, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(q0);
    kiln_device_info info;
    kiln_device_get_info(dev, &info);
    kiln_device *parts[8];
    size_t np = 0;
    unsigned counts[2] = { 1, 1 };
    kiln_split_desc bad = KILN_SPLIT_DESC(.units_each = 1, .num_counts = 2, .counts = counts);
    CHECK_STATUS(kiln_device_split(dev, &bad, parts, 8, &np), KILN_ERROR_INVALID_ARGUMENT);
    kiln_split_desc none = KILN_SPLIT_DESC(.units_each = 0);
    CHECK_STATUS(kiln_device_split(dev, &none, parts, 8, &np), KILN_ERROR_INVALID_ARGUMENT);
    kiln_split_desc raw = { 0 };
    CHECK_STATUS(kiln_device_split(dev, &raw, parts, 8, &np), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_device_split(NULL, &none, parts, 8, &np), KILN_ERROR_NULL_HANDLE);
    unsigned too_many[2] = { info.compute_units, 1 };
    kiln_split_desc over = KILN_SPLIT_DESC(.num_counts = 2, .counts = too_many);
    CHECK_STATUS(kiln_device_split(dev, &over, parts, 8, &np), KILN_ERROR_OUT_OF_RANGE);
    kiln_split_desc by = KILN_SPLIT_DESC(.num_counts = 2, .counts = counts);
    kiln_status st = kiln_device_split(dev, &by, parts, 8, &np);
    if (st == KILN_ERROR_UNSUPPORTED || info.compute_units < 2) {
        printf("  split by counts: %s (%s)\n", kiln_status_name(st), kiln_last_error_message());
        kiln_split_desc eq = KILN_SPLIT_DESC(.units_each = 1);
        st = kiln_device_split(dev, &eq, parts, 8, &np);
        if (st == KILN_ERROR_UNSUPPORTED || np < 2)
            KT_SKIP("%s cannot be split into two parts (%s)", info.id, kiln_last_error_message());
    }
    CHECK(np == 2);
    if (!CHECK_OK(st) || np != 2)
        return;
    kiln_device_info pi;
    kiln_device_get_info(parts[0], &pi);
    CHECK(pi.is_subdevice == 1 && pi.compute_units == 1);

    kiln_context *ctx;
    if (!CHECK_OK(kiln_context_create(parts, 2, &ctx)))
        return;
    kiln_queue *qs[2], *one;
    CHECK_OK(kiln_queue_create(ctx, parts[0], 0, &qs[0]));
    CHECK_OK(kiln_queue_create(ctx, parts[1], 0, &qs[1]));
    CHECK_OK(kiln_queue_create(ctx, parts[0], 0, &one));
    kiln_elementwise *ew;
    CHECK_OK(kiln_elementwise_create(
        ctx,
        &KILN_ELEMENTWISE_DESC(.name = "split_axpb",
                               .arguments = "float a, const float *x, const float *y, float *z",
                               .operation = "z[i] = a * x[i] + y[i] * y[i]"),
        &ew));
    size_t sizes[] = { 0, 1, 255, 256, 257, 1021, 4097, 65537 };
    double weights[][2] = { { 1, 1 }, { 3, 1 }, { 1, 0 }, { 0, 1 } };
    for (size_t si = 0; si < sizeof sizes / sizeof *sizes; si++) {
        size_t n = sizes[si], nb = n ? n * 4 : 4;
        float *hx = malloc(nb), *hy = malloc(nb), *hz = malloc(nb), *hr = malloc(nb);
        for (size_t i = 0; i < n; i++) {
            hx[i] = (float)(kt_rand_unit() * 8 - 4);
            hy[i] = (float)(kt_rand_unit() * 8 - 4);
        }
        kiln_array *x, *y, *z, *r;
        CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &n, hx, &x));
        CHECK_OK(kiln_array_from_host(ctx, KILN_FLOAT32, 1, &n, hy, &y));
        CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &z));
        CHECK_OK(kiln_array_empty(ctx, KILN_FLOAT32, 1, &n, &r));
        kiln_arg args[] = { KILN_ARG_F32(1.5f), KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y),
                            KILN_ARG_ARRAY(r) };
        CHECK_OK(kiln_elementwise_launch(one, ew, n, 4, args, 0, NULL, NULL));
        CHECK_OK(kiln_queue_finish(one));
        if (n)
            CHECK_OK(kiln_array_read(one, r, hr));
        for (size_t w = 0; w < 5; w++) {
            args[3] = KILN_ARG_ARRAY(z);
            kiln_event *done = NULL;
            CHECK_OK(kiln_elementwise_launch_split(2, qs, w < 4 ? weights[w] : NULL, ew, n, 4, args,
                                                   0, NULL, &done));
            CHECK_OK(kiln_event_wait(done));
            kiln_event_release(done);
            if (n)
                CHECK_OK(kiln_array_read(one, z, hz));
            CHECK_MSG(memcmp(hz, hr, n * 4) == 0, "n %zu weights %zu: split differs", n, w);
            int near = 1;
            for (size_t i = 0; i < n; i++) {
                float want = 1.5f * hx[i] + hy[i] * hy[i];
                near &= fabsf(hz[i] - want) <= 1e-5f * (fabsf(want) + 16);
            }
            CHECK_MSG(near, "n %zu weights %zu: not the serial loop's", n, w);
        }
        /* random numbers: split fill = one fill, offset advanced alike */
        kiln_rng *ra, *rb;
        CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 99), &ra));
        CHECK_OK(kiln_rng_create(&KILN_RNG_DESC(.seed = 99), &rb));
        CHECK_OK(kiln_rng_uniform(one, ra, r, 0, NULL, NULL));
        kiln_event *done = NULL;
        CHECK_OK(kiln_rng_uniform_split(2, qs, weights[1], rb, z, 0, NULL, &done));
        CHECK_OK(kiln_event_wait(done));
        kiln_event_release(done);
        CHECK_OK(kiln_queue_finish(one));
        if (n) {
            CHECK_OK(kiln_array_read(one, r, hr));
            CHECK_OK(kiln_array_read(one, z, hz));
        }
        CHECK_MSG(memcmp(hz, hr, n * 4) == 0, "n %zu: split uniform fill differs", n);
        uint64_t oa = 0, ob = 1;
        kiln_rng_get_offset(ra, &oa);
        kiln_rng_get_offset(rb, &ob);
        CHECK_MSG(oa == ob, "n %zu: offsets %llu and %llu", n, (unsigned long long)oa,
                  (unsigned long long)ob);
        KT_RELEASE(ra, rb, x, y, z, r);
        KT_FREE(hx, hy, hz, hr);
    }
    /* weights measured */
    size_t n = 1 << 16;
    kiln_array *x, *y, *z;
    CHECK_OK(kiln_array_zeros(one, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &x));
    CHECK_OK(kiln_array_zeros(one, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &y));
    CHECK_OK(kiln_array_zeros(one, KILN_FLOAT32, 1, &n, 0, NULL, NULL, &z));
    kiln_arg args[] = { KILN_ARG_F32(1.0f), KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y),
                        KILN_ARG_ARRAY(z) };
    double w[2] = { 0, 0 };
    CHECK_OK(kiln_split_weigh(2, qs, ew, n, 4, args, w));
    CHECK_MSG(w[0] > 0 && w[1] > 0, "weights %g %g", w[0], w[1]);
    /* bad input */
    double negative[2] = { -1, 1 }, zeros[2] = { 0, 0 };
    CHECK_STATUS(kiln_elementwise_launch_split(2, qs, negative, ew, n, 4, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_launch_split(2, qs, zeros, ew, n, 4, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_launch_split(0, qs, NULL, ew, n, 4, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_elementwise_launch_split(2, qs, NULL, ew, n + 1, 4, args, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    kiln_queue *foreign[2] = { qs[0], q0 };
    CHECK_STATUS(kiln_elementwise_launch_split(2, foreign, NULL, ew, n, 4, args, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_elementwise_launch_split(2, qs, NULL, NULL, n, 4, args, 0, NULL, NULL),
                 KILN_ERROR_NULL_HANDLE);
    CHECK_OK(kiln_queue_finish(one));
    KT_RELEASE(x, y, z, ew, qs[0], qs[1], one, ctx);
}

/* Copies between contexts (the staged path) and within one. */
static void test_copy_between(kiln_queue *q, void *user) {
    (void)user;
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *c2;
    if (!CHECK_OK(kiln_context_create(&dev, 1, &c2)))
        return;
    kiln_queue *q2;
    CHECK_OK(kiln_queue_create(c2, dev, 0, &q2));
    size_t sizes[] = { 0, 1, 3, 4096, 65537 };
    for (size_t si = 0; si < 5; si++) {
        size_t n = sizes[si], cap = n + 11;
        unsigned char *h = malloc(cap), *got = malloc(cap), *zero = calloc(1, cap);
        for (size_t i = 0; i < cap; i++)
            h[i] = (unsigned char)kt_rand_u64();
        kiln_buffer *a, *b, *c;
        CHECK_OK(kiln_buffer_create(kiln_queue_context(q), cap, 0, h, &a));
        CHECK_OK(kiln_buffer_create(c2, cap, 0, zero, &b));
        CHECK_OK(kiln_buffer_create(kiln_queue_context(q), cap, 0, zero, &c));
        kiln_event *done = NULL;
        /* a[3..3+n) -> b[7..7+n) across contexts, then b -> c back */
        CHECK_OK(kiln_buffer_copy_between(q2, b, 7, q, a, 3, n, 0, NULL, &done));
        kiln_event *back = NULL;
        CHECK_OK(kiln_buffer_copy_between(q, c, 1, q2, b, 7, n, 1, &done, &back));
        CHECK_OK(kiln_event_wait(back));
        CHECK_OK(kiln_buffer_read(q, c, 0, cap, got));
        int ok = 1;
        for (size_t i = 0; i < cap; i++)
            ok &= got[i] == (i >= 1 && i < 1 + n ? h[i + 2] : 0);
        CHECK_MSG(ok, "n %zu: bytes through another context", n);
        /* one context: a plain copy */
        CHECK_OK(kiln_buffer_copy_between(q, c, 0, q, a, 0, cap, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, c, 0, cap, got));
        CHECK(memcmp(got, h, cap) == 0);
        CHECK_STATUS(kiln_buffer_copy_between(q, c, 1, q2, b, 0, cap, 0, NULL, NULL),
                     KILN_ERROR_OUT_OF_RANGE);
        /* the device-to-device path: OpenCL contexts share no memory */
        kiln_device_info di;
        kiln_device_get_info(dev, &di);
        kiln_status peer = kiln_buffer_copy_peer(q, c, 0, b, 0, 1, 0, NULL, NULL);
        CHECK_MSG(di.backend == KILN_BACKEND_OPENCL
                      ? peer == KILN_ERROR_UNSUPPORTED
                      : peer == KILN_OK || peer == KILN_ERROR_UNSUPPORTED,
                  "peer copy: %s", kiln_status_name(peer));
        CHECK_STATUS(kiln_buffer_copy_peer(q, c, 0, a, 0, 1, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK_STATUS(kiln_buffer_copy_peer(q, c, 0, b, cap, 1, 0, NULL, NULL),
                     KILN_ERROR_OUT_OF_RANGE);
        CHECK_STATUS(kiln_buffer_copy_peer(q, c, 0, NULL, 0, 1, 0, NULL, NULL),
                     KILN_ERROR_NULL_HANDLE);
        CHECK_OK(kiln_queue_finish(q));
        CHECK_STATUS(kiln_buffer_copy_between(q, b, 0, q2, a, 0, 1, 0, NULL, NULL),
                     KILN_ERROR_MISMATCH);
        KT_RELEASE(done, back, a, b, c);
        KT_FREE(h, got, zero);
    }
    KT_RELEASE(q2, c2);
}

int main(void) {
    kt_for_each_device(test_copy_between, NULL);
    kt_for_each_device(run, NULL);
    return kt_report();
}
