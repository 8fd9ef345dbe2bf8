/* The host backend (src/backend/host/) through the public API on host:0:
 * kernels with barriers and local memory (fibers) against serial C, local
 * memory arguments, atomics, 2-D/3-D ids, a barrier reached by part of a
 * group (the launch fails, never a wrong answer), sub-group operations
 * refused at build time, build errors at the user's lines, out-of-order
 * queues and user events, failure propagation, profiling times, zero-copy
 * maps. Exits 77 where there is no host device (no C compiler). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "kiln.h"

static const char *src =
    "KILN_FUNC uint mix(uint x) { x ^= x >> 16; x *= 0x7feb352du; return x ^ (x >> 15); }\n"
    /* a tree reduction in local memory; every group writes its sum */
    "KILN_KERNEL void group_sums(KILN_GLOBAL const uint *x, KILN_GLOBAL uint *sums,\n"
    "                            KILN_GLOBAL uint *total, uint n) {\n"
    "    KILN_LOCAL uint tile[1024];\n"
    "    size_t l = kiln_local_id(0), i = kiln_global_id(0);\n"
    "    tile[l] = i < n ? x[i] : 0u;\n"
    "    kiln_barrier();\n"
    "    for (size_t s = kiln_local_size(0) / 2; s > 0; s /= 2) {\n"
    "        if (l < s)\n"
    "            tile[l] += tile[l + s];\n"
    "        kiln_barrier();\n"
    "    }\n"
    "    if (l == 0) {\n"
    "        sums[kiln_group_id(0)] = tile[0];\n"
    "        kiln_atomic_add_uint(total, tile[0]);\n"
    "    }\n"
    "}\n"
    /* a local-memory argument: reverse each group's values */
    "KILN_KERNEL void reverse(KILN_GLOBAL const int *x, KILN_GLOBAL int *y, KILN_LOCAL int *t) {\n"
    "    size_t l = kiln_local_id(0), L = kiln_local_size(0), g = kiln_group_id(0);\n"
    "    t[l] = x[g * L + l];\n"
    "    kiln_barrier();\n"
    "    y[g * L + l] = t[L - 1 - l];\n"
    "}\n"
    /* ids in three dimensions, through a helper */
    "KILN_FUNC size_t lin(void) {\n"
    "    return (kiln_global_id(2) * kiln_global_size(1) + kiln_global_id(1)) *\n"
    "           kiln_global_size(0) + kiln_global_id(0);\n"
    "}\n"
    "KILN_KERNEL void ids3(KILN_GLOBAL uint *out) {\n"
    "    out[lin()] = mix((uint)(kiln_group_id(0) + 7 * kiln_local_id(1) + 31 * "
    "kiln_group_id(2)));\n"
    "}\n"
    /* a barrier only some work-items reach */
    "KILN_KERNEL void half_barrier(KILN_GLOBAL int *x) {\n"
    "    if (kiln_local_id(0) >= 2)\n"
    "        kiln_barrier();\n"
    "    x[kiln_global_id(0)] = 1;\n"
    "}\n"
    /* a 2-D tile through local memory, the barrier in a helper */
    "KILN_FUNC void sync(void) { kiln_barrier(); }\n"
    "KILN_KERNEL void transpose(KILN_GLOBAL const int *in, KILN_GLOBAL int *out, uint w, uint h) "
    "{\n"
    "    KILN_LOCAL int tile[8][9];\n"
    "    size_t lx = kiln_local_id(0), ly = kiln_local_id(1);\n"
    "    size_t x = kiln_global_id(0), y = kiln_global_id(1);\n"
    "    tile[ly][lx] = in[y * w + x];\n"
    "    sync();\n"
    "    size_t ox = kiln_group_id(1) * 8 + lx, oy = kiln_group_id(0) * 8 + ly;\n"
    "    out[oy * h + ox] = tile[lx][ly];\n"
    "}\n"
    "KILN_KERNEL void counter(KILN_GLOBAL int *c, KILN_GLOBAL float *f) {\n"
    "    kiln_atomic_add_int(c, 1);\n"
    "    kiln_atomic_max_int(c + 1, (int)kiln_global_id(0));\n"
    "    kiln_atomic_add_float(f, 0.5f);\n"
    "}\n"
    "KILN_KERNEL void axpy(KILN_GLOBAL float *y, KILN_GLOBAL const float *x, float a, uint n) {\n"
    "    size_t i = kiln_global_id(0);\n"
    "    if (i < n)\n"
    "        y[i] = a * x[i] + y[i];\n"
    "}\n";

static uint32_t mix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x7feb352du;
    return x ^ (x >> 15);
}

static void test_barriers(kiln_queue *q, kiln_program *p) {
    kiln_context *c = kiln_queue_context(q);
    kiln_kernel *k = NULL;
    if (!CHECK_OK(kiln_kernel_create(p, "group_sums", &k)))
        return;
    size_t sizes[] = { 1, 2, 17, 255, 256, 257, 1000, 4097 };
    size_t locals[] = { 1, 2, 64, 256, 1024 };
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++)
        for (size_t li = 0; li < sizeof locals / sizeof locals[0]; li++) {
            size_t n = sizes[si], L = locals[li], G = (n + L - 1) / L * L, ng = G / L;
            uint32_t *x = malloc(n * 4), *sums = calloc(ng, 4), total = 0, want_total = 0;
            for (size_t i = 0; i < n; i++)
                x[i] = (uint32_t)kt_rand_u64() & 0xffff;
            kiln_buffer *bx = NULL, *bs = NULL, *bt = NULL;
            CHECK_OK(kiln_buffer_create(c, n * 4, 0, x, &bx));
            CHECK_OK(kiln_buffer_create(c, ng * 4, 0, NULL, &bs));
            CHECK_OK(kiln_buffer_create(c, 4, 0, &total, &bt));
            kiln_arg a[] = { KILN_ARG_BUF(bx), KILN_ARG_BUF(bs), KILN_ARG_BUF(bt),
                             KILN_ARG_U32((uint32_t)n) };
            CHECK_OK(kiln_kernel_launch(q, k, 1, &G, &L, 4, a, 0, NULL, NULL));
            CHECK_OK(kiln_buffer_read(q, bs, 0, ng * 4, sums));
            CHECK_OK(kiln_buffer_read(q, bt, 0, 4, &total));
            size_t bad = 0;
            for (size_t g = 0; g < ng; g++) {
                uint32_t w = 0;
                for (size_t i = g * L; i < (g + 1) * L && i < n; i++)
                    w += x[i];
                want_total += w;
                bad += sums[g] != w;
            }
            CHECK_MSG(bad == 0 && total == want_total,
                      "n %zu local %zu: %zu groups wrong, %u vs %u", n, L, bad, total, want_total);
            KT_RELEASE(bx, bs, bt);
            KT_FREE(x, sums);
        }
    kiln_kernel_release(k);

    /* 2-D groups with a barrier: a tiled transpose */
    if (CHECK_OK(kiln_kernel_create(p, "transpose", &k))) {
        enum { W = 24, H = 40 };
        static int32_t in[W * H], out[W * H];
        for (int i = 0; i < W * H; i++)
            in[i] = i * 7 + 1;
        kiln_buffer *bi = NULL, *bo = NULL;
        CHECK_OK(kiln_buffer_create(c, sizeof in, 0, in, &bi));
        CHECK_OK(kiln_buffer_create(c, sizeof out, 0, NULL, &bo));
        size_t g[2] = { W, H }, l[2] = { 8, 8 };
        kiln_arg a[] = { KILN_ARG_BUF(bi), KILN_ARG_BUF(bo), KILN_ARG_U32(W), KILN_ARG_U32(H) };
        CHECK_OK(kiln_kernel_launch(q, k, 2, g, l, 4, a, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, bo, 0, sizeof out, out));
        size_t bad = 0;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++)
                bad += out[x * H + y] != in[y * W + x];
        CHECK_MSG(bad == 0, "transpose: %zu wrong", bad);
        KT_RELEASE(bi, bo, k);
    }
    /* KILN_ARG_LOCAL */
    if (CHECK_OK(kiln_kernel_create(p, "reverse", &k))) {
        size_t L = 96, n = L * 5;
        int32_t x[480], y[480];
        for (size_t i = 0; i < n; i++)
            x[i] = (int32_t)i * 3 - 7;
        kiln_buffer *bx = NULL, *by = NULL;
        CHECK_OK(kiln_buffer_create(c, sizeof x, 0, x, &bx));
        CHECK_OK(kiln_buffer_create(c, sizeof y, 0, NULL, &by));
        kiln_arg a[] = { KILN_ARG_BUF(bx), KILN_ARG_BUF(by), KILN_ARG_LOCAL_BYTES(L * 4) };
        CHECK_OK(kiln_kernel_launch(q, k, 1, &n, &L, 3, a, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, by, 0, sizeof y, y));
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += y[i] != x[(i / L) * L + (L - 1 - i % L)];
        CHECK_MSG(bad == 0, "reverse: %zu wrong", bad);
        KT_RELEASE(bx, by, k);
    }
}

static void test_ids_atomics(kiln_queue *q, kiln_program *p) {
    kiln_context *c = kiln_queue_context(q);
    kiln_kernel *k = NULL;
    if (CHECK_OK(kiln_kernel_create(p, "ids3", &k))) {
        size_t g[3] = { 6, 5, 3 }, l[3] = { 3, 5, 1 }, n = 90;
        uint32_t out[90];
        kiln_buffer *b = NULL;
        CHECK_OK(kiln_buffer_create(c, sizeof out, 0, NULL, &b));
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        CHECK_OK(kiln_kernel_launch(q, k, 3, g, l, 1, a, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, b, 0, sizeof out, out));
        size_t bad = 0;
        for (size_t z = 0; z < 3; z++)
            for (size_t y = 0; y < 5; y++)
                for (size_t x = 0; x < 6; x++)
                    bad += out[(z * 5 + y) * 6 + x] != mix((uint32_t)(x / 3 + 7 * y + 31 * z));
        CHECK_MSG(bad == 0, "ids3: %zu of %zu wrong", bad, n);
        /* global not a multiple of local: refused, with the sizes */
        size_t l2[3] = { 4, 5, 1 };
        CHECK_STATUS(kiln_kernel_launch(q, k, 3, g, l2, 1, a, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        CHECK(strstr(kiln_last_error_message(), "multiple") != NULL);
        KT_RELEASE(b, k);
    }
    if (CHECK_OK(kiln_kernel_create(p, "counter", &k))) {
        size_t sizes[] = { 1, 31, 1024, 65537, 100003 };
        for (size_t s = 0; s < 5; s++) {
            int32_t cnt[2] = { 0, -1 };
            float f = 0;
            kiln_buffer *bc = NULL, *bf = NULL;
            CHECK_OK(kiln_buffer_create(c, sizeof cnt, 0, cnt, &bc));
            CHECK_OK(kiln_buffer_create(c, sizeof f, 0, &f, &bf));
            kiln_arg a[] = { KILN_ARG_BUF(bc), KILN_ARG_BUF(bf) };
            CHECK_OK(kiln_kernel_launch(q, k, 1, &sizes[s], NULL, 2, a, 0, NULL, NULL));
            CHECK_OK(kiln_buffer_read(q, bc, 0, sizeof cnt, cnt));
            CHECK_OK(kiln_buffer_read(q, bf, 0, sizeof f, &f));
            CHECK_MSG(cnt[0] == (int32_t)sizes[s] && cnt[1] == (int32_t)sizes[s] - 1 &&
                          f == 0.5f * (float)sizes[s],
                      "atomics n=%zu: %d %d %g", sizes[s], cnt[0], cnt[1], (double)f);
            KT_RELEASE(bc, bf);
        }
        kiln_kernel_release(k);
    }
    /* a barrier reached by part of a group: the launch fails */
    if (CHECK_OK(kiln_kernel_create(p, "half_barrier", &k))) {
        size_t n = 64, L = 8;
        kiln_buffer *b = NULL;
        CHECK_OK(kiln_buffer_create(c, n * 4, 0, NULL, &b));
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        kiln_event *e = NULL;
        CHECK_OK(kiln_kernel_launch(q, k, 1, &n, &L, 1, a, 0, NULL, &e));
        CHECK_STATUS(kiln_event_wait(e), KILN_ERROR_EVENT_FAILED);
        KT_RELEASE(e, b, k);
    }
}

static void test_build(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_program *p = NULL;
    /* an error at the user's line 3 */
    CHECK_STATUS(kiln_program_create(c,
                                     "KILN_KERNEL void f(KILN_GLOBAL int *x)\n{\n"
                                     "    x[0] = not_declared_here;\n}\n",
                                     NULL, &p),
                 KILN_ERROR_BUILD);
    const char *log = kiln_last_build_log();
    CHECK_MSG(log && strstr(log, ":3:") && strstr(log, "not_declared_here"), "log: %s",
              log ? log : "(none)");
    /* sub-group operations: refused when built, never run wrongly */
    CHECK_STATUS(kiln_program_create(c,
                                     "KILN_KERNEL void f(KILN_GLOBAL int *x)\n{\n"
                                     "    x[0] = sub_group_reduce_add(x[1]);\n}\n",
                                     NULL, &p),
                 KILN_ERROR_BUILD);
    log = kiln_last_build_log();
    CHECK_MSG(log && strstr(log, "sub_group_reduce_add"), "log: %s", log ? log : "(none)");
    /* -D options reach the compiler */
    kiln_program_opts o = KILN_PROGRAM_OPTS(.build_options = "-DVAL=41 -D TWO=2");
    if (CHECK_OK(kiln_program_create(
            c, "KILN_KERNEL void f(KILN_GLOBAL int *x) { x[kiln_global_id(0)] = VAL + TWO; }\n", &o,
            &p))) {
        kiln_kernel *k = NULL;
        CHECK_OK(kiln_kernel_create(p, "f", &k));
        kiln_buffer *b = NULL;
        int v[3] = { 0, 0, 0 };
        CHECK_OK(kiln_buffer_create(c, sizeof v, 0, NULL, &b));
        size_t n = 3;
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 1, a, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, b, 0, sizeof v, v));
        CHECK(v[0] == 43 && v[1] == 43 && v[2] == 43);
        kiln_kernel *none = NULL;
        CHECK_STATUS(kiln_kernel_create(p, "g", &none), KILN_ERROR_KERNEL_NOT_FOUND);
        KT_RELEASE(b, k, p);
    }
}

static void test_queues(kiln_queue *q0, kiln_program *p) {
    kiln_context *c = kiln_queue_context(q0);
    kiln_queue *q = NULL;
    kiln_kernel *k = NULL;
    if (!CHECK_OK(kiln_queue_create(c, kiln_queue_device(q0),
                                    KILN_QUEUE_OUT_OF_ORDER | KILN_QUEUE_PROFILING, &q)) ||
        !CHECK_OK(kiln_kernel_create(p, "axpy", &k))) {
        kiln_queue_release(q);
        return;
    }
    size_t n = 100003;
    float *x = malloc(n * 4), *y = malloc(n * 4), *r = malloc(n * 4);
    for (size_t i = 0; i < n; i++) {
        x[i] = (float)(i % 97);
        y[i] = (float)(i % 13);
    }
    kiln_buffer *bx = NULL, *by = NULL;
    CHECK_OK(kiln_buffer_create(c, n * 4, 0, x, &bx));
    CHECK_OK(kiln_buffer_create(c, n * 4, 0, y, &by));
    /* a user event holds the launch; a later command runs meanwhile */
    kiln_event *u = NULL, *e1 = NULL, *e2 = NULL;
    CHECK_OK(kiln_event_create_user(c, &u));
    size_t gl = (n + 255) / 256 * 256, L = 256;
    kiln_arg a[] = { KILN_ARG_BUF(by), KILN_ARG_BUF(bx), KILN_ARG_F32(2.0f),
                     KILN_ARG_U32((uint32_t)n) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &gl, &L, 4, a, 1, &u, &e1));
    float one = 1;
    kiln_buffer *bo = NULL;
    CHECK_OK(kiln_buffer_create(c, 4, 0, NULL, &bo));
    CHECK_OK(kiln_buffer_write_async(q, bo, 0, 4, &one, 0, NULL, &e2));
    CHECK_OK(kiln_event_wait(e2)); /* out of order: not behind the held launch */
    kiln_event_state st = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(e1, &st));
    CHECK(st > KILN_EVENT_COMPLETE);
    CHECK_OK(kiln_event_set_complete(u, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e1));
    kiln_event_times t;
    if (CHECK_OK(kiln_event_get_times(e1, &t)))
        CHECK(t.queued <= t.submitted && t.submitted <= t.started && t.started <= t.ended);
    CHECK_OK(kiln_buffer_read(q0, by, 0, n * 4, r));
    size_t bad = 0;
    for (size_t i = 0; i < n; i++)
        bad += r[i] != 2.0f * x[i] + y[i];
    CHECK_MSG(bad == 0, "axpy: %zu wrong", bad);
    KT_RELEASE(u, e1, e2);
    /* a failed user event: the command behind it does not run */
    CHECK_OK(kiln_event_create_user(c, &u));
    CHECK_OK(kiln_kernel_launch(q, k, 1, &gl, &L, 4, a, 1, &u, &e1));
    CHECK_OK(kiln_event_set_complete(u, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(e1), KILN_ERROR_EVENT_FAILED);
    CHECK_OK(kiln_buffer_read(q0, by, 0, n * 4, y));
    CHECK(memcmp(y, r, n * 4) == 0);
    /* a zero-copy map: the buffer's memory itself, twice */
    void *m1 = NULL, *m2 = NULL;
    CHECK_OK(kiln_buffer_map(q0, by, KILN_MAP_READ, 0, n * 4, &m1));
    CHECK_OK(kiln_buffer_map(q0, by, KILN_MAP_READ, 4, 8, &m2));
    CHECK(m1 && m2 == (char *)m1 + 4 && memcmp(m1, r, n * 4) == 0);
    CHECK_OK(kiln_buffer_unmap(q0, by, m2, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_unmap(q0, by, m1, 0, NULL, NULL));
    /* finish reports the command that did not run */
    CHECK_STATUS(kiln_queue_finish(q), KILN_ERROR_EVENT_FAILED);
    KT_RELEASE(u, e1, bx, by, bo, k, q);
    KT_FREE(x, y, r);
}

int main(void) {
    kiln_device *dev = NULL;
    if (kiln_device_select("host:0", &dev) != KILN_OK) {
        printf("SKIPPED: no host device here: %s\n", kiln_last_error_message());
        return 77;
    }
    kiln_context *c = NULL;
    kiln_queue *q = NULL;
    kiln_program *p = NULL;
    if (CHECK_OK(kiln_context_create(&dev, 1, &c)) &&
        CHECK_OK(kiln_queue_create(c, dev, KILN_QUEUE_IN_ORDER, &q))) {
        if (CHECK_OK(kiln_program_create(c, src, NULL, &p))) {
            test_barriers(q, p);
            test_ids_atomics(q, p);
            test_queues(q, p);
            kiln_program_release(p);
        } else {
            printf("%s\n", kiln_last_build_log());
        }
        test_build(q);
    }
    KT_RELEASE(q, c);
    return kt_report();
}
