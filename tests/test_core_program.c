/* Programs, kernels and launches: builds, caches, build errors, argument
 * checks naming the parameter, 1/2/3-D launches with and without local
 * sizes, every scalar dtype, local memory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

/* A local-memory kernel parameter: OpenCL's __local T *. Kept out of
 * src_main because CUDA support for it is newer (dynamic shared memory via
 * a source rewrite); where a CUDA build refuses it, the rest of the tests
 * must still run. */
static const char *src_local =
    "KILN_KERNEL void groupsum(KILN_GLOBAL const int *in, KILN_GLOBAL int *out,\n"
    "                          KILN_LOCAL int *tmp) {\n"
    "    size_t l = kiln_local_id(0), n = kiln_local_size(0);\n"
    "    tmp[l] = in[kiln_global_id(0)];\n"
    "    kiln_barrier();\n"
    "    if (l == 0) { int s = 0; for (size_t i = 0; i < n; i++) s += tmp[i];\n"
    "                  out[kiln_group_id(0)] = s; }\n"
    "}\n";

static const char *src_main =
    "KILN_KERNEL void vadd(KILN_GLOBAL const float *a, KILN_GLOBAL const float *b,\n"
    "                      KILN_GLOBAL float *c, int n) {\n"
    "    int i = (int)kiln_global_id(0);\n"
    "    if (i < n) c[i] = a[i] + b[i];\n"
    "}\n"
    "KILN_KERNEL void grid(KILN_GLOBAL uint *out, uint w, uint h) {\n"
    "    size_t x = kiln_global_id(0), y = kiln_global_id(1), z = kiln_global_id(2);\n"
    "    size_t i = (z * h + y) * w + x;\n"
    "    out[i] = (uint)(x + 1000 * y + 1000000 * z);\n"
    "}\n"
    "KILN_KERNEL void sizes(KILN_GLOBAL uint *out) {\n"
    "    if (kiln_global_id(0) == 0 && kiln_global_id(1) == 0 && kiln_global_id(2) == 0) {\n"
    "        out[0] = (uint)kiln_global_size(0); out[1] = (uint)kiln_global_size(1);\n"
    "        out[2] = (uint)kiln_global_size(2); out[3] = (uint)kiln_local_size(0);\n"
    "        out[4] = (uint)kiln_local_size(1); out[5] = (uint)kiln_local_size(2);\n"
    "    }\n"
    "}\n"
    "KILN_KERNEL void ints(KILN_GLOBAL long *out, char a, uchar b, short c, ushort d, int e,\n"
    "                      uint f, long g, ulong h, float x) {\n"
    "    out[0] = a; out[1] = b; out[2] = c; out[3] = d; out[4] = e; out[5] = f;\n"
    "    out[6] = g; out[7] = (long)h; out[8] = (long)(x * 4.0f);\n"
    "}\n"
    "KILN_KERNEL void many(KILN_GLOBAL int *out, int a0, int a1, int a2, int a3, int a4, int a5,\n"
    "    int a6, int a7, int a8, int a9, int a10, int a11, int a12, int a13, int a14, int a15,\n"
    "    int a16, int a17) {\n"
    "    out[0] = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8 + a9 + a10 + a11 + a12 + a13 +\n"
    "             a14 + a15 + a16 + 1000 * a17;\n"
    "}\n"
    "KILN_KERNEL void opt(KILN_GLOBAL int *out) { out[0] = VALUE; }\n";

static void test_vadd(kiln_queue *q, kiln_kernel *k) {
    kiln_context *ctx = kiln_queue_context(q);
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 65537);
    for (size_t s = 0; s < ns; s++) {
        size_t n = sizes[s], bytes = (n ? n : 1) * sizeof(float);
        float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
        for (size_t i = 0; i < n; i++) {
            a[i] = (float)kt_rand_unit();
            b[i] = (float)kt_rand_unit();
        }
        kiln_buffer *A = NULL, *B = NULL, *C = NULL;
        CHECK_OK(kiln_buffer_create(ctx, bytes, 0, a, &A));
        CHECK_OK(kiln_buffer_create(ctx, bytes, 0, b, &B));
        CHECK_OK(kiln_buffer_create(ctx, bytes, 0, NULL, &C));
        kiln_arg args[] = { KILN_ARG_BUF(A), KILN_ARG_BUF(B), KILN_ARG_BUF(C),
                            KILN_ARG_I32((int)n) };
        kiln_event *e = NULL;
        size_t g = n;
        CHECK_OK(kiln_kernel_launch(q, k, 1, &g, NULL, 4, args, 0, NULL, &e));
        CHECK(e != NULL);
        CHECK_OK(kiln_event_wait(e));
        kiln_event_release(e);
        /* with a local size: round global up; the kernel bounds-checks */
        size_t local = 64, g2 = (n + 63) / 64 * 64;
        if (g2 == 0)
            g2 = 64;
        CHECK_OK(kiln_kernel_launch(q, k, 1, &g2, &local, 4, args, 0, NULL, NULL));
        if (n)
            CHECK_OK(kiln_buffer_read(q, C, 0, n * sizeof(float), c));
        int good = 1;
        for (size_t i = 0; i < n; i++)
            good &= c[i] == a[i] + b[i];
        CHECK_MSG(good, "vadd n=%zu", n);
        KT_RELEASE(A, B, C);
        KT_FREE(a, b, c);
    }
}

static void test_grid(kiln_queue *q, kiln_program *p) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_kernel *k = NULL, *ks = NULL;
    CHECK_OK(kiln_kernel_create(p, "grid", &k));
    CHECK_OK(kiln_kernel_create(p, "sizes", &ks));
    CHECK(kiln_kernel_num_args(k) == 3);

    /* occupancy: CUDA tells it (at least one work-group of 256 fits a
     * compute unit, fewer of 1024 than of 64), OpenCL cannot */
    kiln_device *dev = kiln_queue_device(q);
    unsigned occ = 99, occ_big = 0, occ_small = 0;
    kiln_status ost = kiln_kernel_occupancy(k, dev, 256, &occ);
    kiln_device_info dinfo;
    CHECK_OK(kiln_device_get_info(dev, &dinfo));
    if (strncmp(dinfo.id, "cuda:", 5) == 0) {
        CHECK_OK(ost);
        CHECK_MSG(occ >= 1 && occ <= 64, "occupancy %u work-groups of 256", occ);
        CHECK_OK(kiln_kernel_occupancy(k, dev, 1024, &occ_big));
        CHECK_OK(kiln_kernel_occupancy(k, dev, 64, &occ_small));
        CHECK_MSG(occ_big >= 1 && occ_big * 1024 <= occ_small * 64, "%u groups of 1024, %u of 64",
                  occ_big, occ_small);
    } else {
        CHECK_STATUS(ost, KILN_ERROR_UNSUPPORTED);
        CHECK(occ == 0);
    }
    CHECK_STATUS(kiln_kernel_occupancy(NULL, dev, 256, &occ), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_kernel_occupancy(k, NULL, 256, &occ), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_kernel_occupancy(k, dev, 256, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_kernel_occupancy(k, dev, 0, &occ), KILN_ERROR_INVALID_ARGUMENT);
    static const struct {
        unsigned dims;
        size_t g[3], l[3];
        int with_local;
    } cases[] = {
        { 1, { 257, 1, 1 }, { 0 }, 0 },     { 1, { 256, 1, 1 }, { 16, 1, 1 }, 1 },
        { 2, { 33, 17, 1 }, { 0 }, 0 },     { 2, { 64, 32, 1 }, { 8, 4, 1 }, 1 },
        { 3, { 7, 5, 3 }, { 0 }, 0 },       { 3, { 16, 8, 4 }, { 4, 2, 2 }, 1 },
        { 2, { 1, 1, 1 }, { 1, 1, 1 }, 1 }, { 3, { 8, 8, 8 }, { 8, 8, 1 }, 1 },
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        unsigned dims = cases[c].dims;
        size_t w = cases[c].g[0], h = dims > 1 ? cases[c].g[1] : 1,
               d = dims > 2 ? cases[c].g[2] : 1;
        size_t n = w * h * d;
        uint32_t *out = malloc(n * sizeof *out);
        kiln_buffer *B = NULL, *S = NULL;
        CHECK_OK(kiln_buffer_create(ctx, n * sizeof *out, 0, NULL, &B));
        CHECK_OK(kiln_buffer_create(ctx, 6 * sizeof(uint32_t), 0, NULL, &S));
        kiln_arg args[] = { KILN_ARG_BUF(B), KILN_ARG_U32((uint32_t)w), KILN_ARG_U32((uint32_t)h) };
        const size_t *local = cases[c].with_local ? cases[c].l : NULL;
        CHECK_OK(kiln_kernel_launch(q, k, dims, cases[c].g, local, 3, args, 0, NULL, NULL));
        kiln_arg sargs[] = { KILN_ARG_BUF(S) };
        CHECK_OK(kiln_kernel_launch(q, ks, dims, cases[c].g, local, 1, sargs, 0, NULL, NULL));
        CHECK_OK(kiln_buffer_read(q, B, 0, n * sizeof *out, out));
        int good = 1;
        for (size_t z = 0; z < d; z++)
            for (size_t y = 0; y < h; y++)
                for (size_t x = 0; x < w; x++)
                    good &= out[(z * h + y) * w + x] == (uint32_t)(x + 1000 * y + 1000000 * z);
        CHECK_MSG(good, "grid case %zu (%uD)", c, dims);
        uint32_t sz[6];
        CHECK_OK(kiln_buffer_read(q, S, 0, sizeof sz, sz));
        CHECK(sz[0] == w && sz[1] == h && sz[2] == d);
        if (local)
            CHECK_MSG(sz[3] == cases[c].l[0] && sz[4] == (dims > 1 ? cases[c].l[1] : 1) &&
                          sz[5] == (dims > 2 ? cases[c].l[2] : 1),
                      "case %zu local %u %u %u", c, sz[3], sz[4], sz[5]);
        KT_RELEASE(B, S);
        free(out);
    }
    /* launch-shape errors */
    kiln_buffer *B = NULL;
    CHECK_OK(kiln_buffer_create(ctx, 4096, 0, NULL, &B));
    kiln_arg args[] = { KILN_ARG_BUF(B), KILN_ARG_U32(4), KILN_ARG_U32(4) };
    size_t g[4] = { 4, 4, 4, 4 }, l[4] = { 1, 1, 1, 1 };
    CHECK_STATUS(kiln_kernel_launch(q, k, 0, g, NULL, 3, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_kernel_launch(q, k, 4, g, NULL, 3, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    size_t big = info.max_work_group_size + 1, gbig = big * 2;
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, &gbig, &big, 3, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK_MSG(strstr(kiln_last_error_message(), "work-group") ||
                  strstr(kiln_last_error_message(), "limit"),
              "%s", kiln_last_error_message());
    size_t l0[3] = { 0, 1, 1 };
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, g, l0, 3, args, 0, NULL, NULL),
                 KILN_ERROR_INVALID_ARGUMENT);
    /* global not a multiple of local: CUDA launches whole blocks and OpenCL
     * 1.x has no non-uniform work-groups, so both refuse it; on OpenCL 2.0+
     * they are the driver's choice (optional in 3.0) */
    size_t g7 = 7, l4 = 4;
    kiln_status st = kiln_kernel_launch(q, k, 1, &g7, &l4, 3, args, 0, NULL, NULL);
    int must_refuse =
        info.backend == KILN_BACKEND_CUDA || strncmp(info.version, "OpenCL 1.", 9) == 0;
    if (must_refuse)
        CHECK_STATUS(st, KILN_ERROR_INVALID_ARGUMENT);
    else
        CHECK_MSG(st == KILN_OK || st == KILN_ERROR_INVALID_ARGUMENT, "%s", kiln_status_name(st));
    if (st != KILN_OK)
        CHECK_MSG(strstr(kiln_last_error_message(), "multiple") != NULL, "%s",
                  kiln_last_error_message());
    printf("  global 7 / local 4: %s\n", kiln_status_name(st));
    /* zero global size: nothing enqueued, a completed event */
    size_t g0[2] = { 0, 5 };
    kiln_event *e = NULL;
    CHECK_OK(kiln_kernel_launch(q, k, 2, g0, NULL, 3, args, 0, NULL, &e));
    kiln_event_state es = KILN_EVENT_ERROR;
    CHECK_OK(kiln_event_get_state(e, &es));
    CHECK(es == KILN_EVENT_COMPLETE);
    kiln_event_release(e);
    (void)l;
    CHECK_OK(kiln_queue_finish(q));
    KT_RELEASE(B, k, ks);
}

static void test_scalars(kiln_queue *q, kiln_program *p) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "ints", &k));
    kiln_buffer *B = NULL;
    CHECK_OK(kiln_buffer_create(ctx, 9 * sizeof(int64_t), 0, NULL, &B));
    for (int round = 0; round < 20; round++) {
        int8_t a = (int8_t)kt_rand_u64();
        uint8_t b = (uint8_t)kt_rand_u64();
        int16_t c = (int16_t)kt_rand_u64();
        uint16_t d = (uint16_t)kt_rand_u64();
        int32_t e = (int32_t)kt_rand_u64();
        uint32_t f = (uint32_t)kt_rand_u64();
        int64_t g = (int64_t)kt_rand_u64();
        uint64_t h = kt_rand_u64() >> 1;
        float x = (float)((int)(kt_rand_u64() % 1000) - 500) / 4.0f;
        kiln_arg args[] = { KILN_ARG_BUF(B), KILN_ARG_I8(a),  KILN_ARG_U8(b),  KILN_ARG_I16(c),
                            KILN_ARG_U16(d), KILN_ARG_I32(e), KILN_ARG_U32(f), KILN_ARG_I64(g),
                            KILN_ARG_U64(h), KILN_ARG_F32(x) };
        CHECK_OK(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL));
        int64_t out[9];
        CHECK_OK(kiln_buffer_read(q, B, 0, sizeof out, out));
        CHECK(out[0] == a && out[1] == b && out[2] == c && out[3] == d && out[4] == e);
        CHECK(out[5] == f && out[6] == g && (uint64_t)out[7] == h && out[8] == (int64_t)(x * 4.0f));
    }
    /* wrong dtypes name the parameter */
    kiln_arg args[] = { KILN_ARG_BUF(B), KILN_ARG_I8(1),  KILN_ARG_U8(1),  KILN_ARG_I16(1),
                        KILN_ARG_U16(1), KILN_ARG_I32(1), KILN_ARG_U32(1), KILN_ARG_I64(1),
                        KILN_ARG_U64(1), KILN_ARG_F32(1) };
    static const char *names[] = { "out", "a", "b", "c", "d", "e", "f", "g", "h", "x" };
    for (size_t i = 1; i < 10; i++) {
        kiln_arg saved = args[i];
        args[i] = i == 9 ? KILN_ARG_F64(1.0) : KILN_ARG_F32(1.0f);
        CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                     KILN_ERROR_KERNEL_ARGS);
        char want[32];
        snprintf(want, sizeof want, "argument %zu ('%s')", i, names[i]);
        CHECK_MSG(strstr(kiln_last_error_message(), want) != NULL, "want '%s' in: %s", want,
                  kiln_last_error_message());
        args[i] = saved;
    }
    /* the kinds */
    args[0] = KILN_ARG_I32(3);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "'out'") &&
                  strstr(kiln_last_error_message(), "buffer"),
              "%s", kiln_last_error_message());
    args[0] = KILN_ARG_LOCAL_BYTES(64);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    args[0] = KILN_ARG_BUF(B);
    args[4] = KILN_ARG_BUF(B);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "'d'") != NULL, "%s", kiln_last_error_message());
    args[4] = KILN_ARG_U16(1);
    kiln_arg bad = { .kind = KILN_ARG_SCALAR, .dtype = (kiln_dtype)77 };
    args[5] = bad;
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    args[5] = KILN_ARG_I32(1);
    /* the count */
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 9, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "10") && strstr(kiln_last_error_message(), "got 9"),
              "%s", kiln_last_error_message());
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 0, NULL, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    /* a buffer of another context */
    kiln_device *dev = kiln_queue_device(q);
    kiln_context *ctx2 = NULL;
    kiln_buffer *foreign = NULL;
    CHECK_OK(kiln_context_create(&dev, 1, &ctx2));
    CHECK_OK(kiln_buffer_create(ctx2, 128, 0, NULL, &foreign));
    args[0] = KILN_ARG_BUF(foreign);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "context") != NULL, "%s",
              kiln_last_error_message());
    /* a kernel of another context */
    kiln_program *p2 = NULL;
    kiln_kernel *k2 = NULL;
    kiln_queue *q2 = NULL;
    CHECK_OK(kiln_queue_create(ctx2, dev, 0, &q2));
    CHECK_OK(
        kiln_program_create(ctx2, src_main, &KILN_PROGRAM_OPTS(.build_options = "-DVALUE=1"), &p2));
    CHECK_OK(kiln_kernel_create(p2, "ints", &k2));
    args[0] = KILN_ARG_BUF(B);
    CHECK_STATUS(kiln_kernel_launch(q2, k, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_kernel_launch(q, k2, 1, (size_t[]){ 1 }, NULL, 10, args, 0, NULL, NULL),
                 KILN_ERROR_MISMATCH);
    KT_RELEASE(k2, p2, q2, foreign, ctx2, B, k);

    /* more than 16 arguments */
    kiln_kernel *km = NULL;
    CHECK_OK(kiln_kernel_create(p, "many", &km));
    CHECK(kiln_kernel_num_args(km) == 19);
    kiln_buffer *M = NULL;
    CHECK_OK(kiln_buffer_create(ctx, sizeof(int), 0, NULL, &M));
    kiln_arg margs[19];
    margs[0] = KILN_ARG_BUF(M);
    int want = 0;
    for (int i = 0; i < 18; i++) {
        margs[i + 1] = KILN_ARG_I32(i + 1);
        want += (i == 17 ? 1000 : 1) * (i + 1);
    }
    CHECK_OK(kiln_kernel_launch(q, km, 1, (size_t[]){ 1 }, NULL, 19, margs, 0, NULL, NULL));
    int got = 0;
    CHECK_OK(kiln_buffer_read(q, M, 0, sizeof got, &got));
    CHECK(got == want);
    margs[18] = KILN_ARG_F32(1);
    CHECK_STATUS(kiln_kernel_launch(q, km, 1, (size_t[]){ 1 }, NULL, 19, margs, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "argument 18 ('a17')") != NULL, "%s",
              kiln_last_error_message());
    KT_RELEASE(M, km);
}

static void test_local(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    /* every backend takes KILN_LOCAL pointer parameters (CUDA: dynamic
     * shared memory) */
    if (!CHECK_OK(kiln_program_create(ctx, src_local, NULL, &p)))
        return;
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "groupsum", &k));
    kiln_program_release(p);
    const size_t groups = 37, lsz = 32, n = groups * lsz;
    int *in = malloc(n * sizeof *in), out[37];
    for (size_t i = 0; i < n; i++)
        in[i] = (int)(kt_rand_u64() % 2001) - 1000;
    kiln_buffer *I = NULL, *O = NULL;
    CHECK_OK(kiln_buffer_create(ctx, n * sizeof *in, 0, in, &I));
    CHECK_OK(kiln_buffer_create(ctx, sizeof out, 0, NULL, &O));
    kiln_arg args[] = { KILN_ARG_BUF(I), KILN_ARG_BUF(O), KILN_ARG_LOCAL_BYTES(lsz * sizeof(int)) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &n, &lsz, 3, args, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q, O, 0, sizeof out, out));
    CHECK(kt_group_sums_ok(in, out, groups, lsz));
    args[2] = KILN_ARG_LOCAL_BYTES(0);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, &n, &lsz, 3, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    args[2] = KILN_ARG_I32(4);
    CHECK_STATUS(kiln_kernel_launch(q, k, 1, &n, &lsz, 3, args, 0, NULL, NULL),
                 KILN_ERROR_KERNEL_ARGS);
    CHECK_MSG(strstr(kiln_last_error_message(), "'tmp'") != NULL, "%s", kiln_last_error_message());
    KT_RELEASE(I, O, k);
    free(in);
}

static void test_programs(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_device *dev = kiln_queue_device(q);
    kiln_program *p = NULL;
    kiln_program_opts opts = { .struct_size = sizeof opts, .build_options = "-DVALUE=42" };
    if (!CHECK_OK(kiln_program_create(ctx, src_main, &opts, &p)))
        return;
    CHECK(kiln_program_build_log(p, dev) != NULL);
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "vadd", &k));
    CHECK(kiln_kernel_num_args(k) == 4);
    CHECK_OK(kiln_kernel_retain(k));
    kiln_kernel_release(k);
    CHECK_OK(kiln_program_retain(p));
    kiln_program_release(p);

    /* the build options reach the compiler */
    kiln_kernel *ko = NULL;
    kiln_buffer *O = NULL;
    int v = 0;
    CHECK_OK(kiln_kernel_create(p, "opt", &ko));
    CHECK_OK(kiln_buffer_create(ctx, sizeof v, 0, NULL, &O));
    CHECK_OK(kiln_kernel_launch(q, ko, 1, (size_t[]){ 1 }, NULL, 1, (kiln_arg[]){ KILN_ARG_BUF(O) },
                                0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q, O, 0, sizeof v, &v));
    CHECK(v == 42);
    KT_RELEASE(O, ko);

    /* unknown kernel names list what exists */
    kiln_kernel *none = NULL;
    CHECK_STATUS(kiln_kernel_create(p, "vsub", &none), KILN_ERROR_KERNEL_NOT_FOUND);
    CHECK(none == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "vsub") &&
                  strstr(kiln_last_error_message(), "vadd") &&
                  strstr(kiln_last_error_message(), "sizes"),
              "%s", kiln_last_error_message());

    test_vadd(q, k);
    test_grid(q, p);
    test_scalars(q, p);
    test_local(q);
    kiln_kernel_release(k);
    /* the kernel keeps the program alive */
    CHECK_OK(kiln_kernel_create(p, "vadd", &k));
    kiln_program_release(p);
    CHECK(kiln_kernel_num_args(k) == 4);
    kiln_kernel_release(k);
}

/* 1 if a compiler log names line n of the main source, in any compiler's
 * form: clang's "<kernel>:2:12:" or PoCL's "file.cl:2:12:", NVRTC's
 * "kiln.cu(2):". */
static int names_line(const char *log, int n) {
    char colon[32], paren[32];
    snprintf(colon, sizeof colon, ":%d:", n);
    snprintf(paren, sizeof paren, "(%d)", n);
    return strstr(log, colon) != NULL || strstr(log, paren) != NULL;
}

/* Lines of the backend's prelude (what the user's line 1 follows). */
static int prelude_lines(kiln_queue *q) {
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    size_t nb = 0;
    const kiln__backend *const *backends = kiln__backend_registry(&nb);
    const char *pre = "";
    for (size_t i = 0; i < nb; i++)
        if (backends[i]->kind == info.backend)
            pre = kiln__embedded_file(backends[i]->prelude_file);
    int n = 0;
    for (; pre && *pre; pre++)
        n += *pre == '\n';
    return n;
}

static void test_build_errors(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_program *p = NULL;
    const char *bad = "KILN_KERNEL void broken(KILN_GLOBAL int *x) {\n"
                      "    x[0] = undeclared_thing_42;\n"
                      "}\n";
    CHECK_STATUS(kiln_program_create(ctx, bad, NULL, &p), KILN_ERROR_BUILD);
    CHECK(p == NULL);
    CHECK_MSG(strstr(kiln_last_build_log(), "undeclared_thing_42") != NULL, "log: %s",
              kiln_last_build_log());
    CHECK_MSG(strstr(kiln_last_error_message(), "error") != NULL, "%s", kiln_last_error_message());
    /* the log's line numbers are the user's: the prelude ends with #line 1,
     * and where a compiler ignores it (NVIDIA OpenCL) the core maps them */
    CHECK_MSG(names_line(kiln_last_build_log(), 2), "log: %s", kiln_last_build_log());
    CHECK_MSG(!names_line(kiln_last_build_log(), 2 + prelude_lines(q)), "log: %s",
              kiln_last_build_log());
    /* ... and shows the offending line, in the log and in the message */
    CHECK_MSG(strstr(kiln_last_build_log(), "source:2: x[0] = undeclared_thing_42;") != NULL,
              "log: %s", kiln_last_build_log());
    CHECK_MSG(strstr(kiln_last_error_message(), "-- at source:2: x[0] = undeclared_thing_42;") !=
                  NULL,
              "%s", kiln_last_error_message());
    /* a bad option */
    kiln_program_opts o = { .struct_size = sizeof o, .build_options = "-this-is-no-option" };
    /* the compiler refuses it: a build error on every backend */
    CHECK_STATUS(kiln_program_create(ctx, "KILN_KERNEL void f(void) {}", &o, &p), KILN_ERROR_BUILD);
    CHECK(p == NULL);
    /* options that are not made with KILN_PROGRAM_OPTS: struct_size 0 */
    kiln_program_opts unsized = { .build_options = "-DVALUE=1" };
    CHECK_STATUS(kiln_program_create(ctx, "KILN_KERNEL void f(void) {}", &unsized, &p),
                 KILN_ERROR_INVALID_ARGUMENT);
    CHECK(p == NULL && strstr(kiln_last_error_message(), "KILN_PROGRAM_OPTS") != NULL);
    /* a later, larger version of the options: the known part is read */
    struct {
        kiln_program_opts o;
        long later_member;
    } newer = { .o = KILN_PROGRAM_OPTS(.build_options = "-DVALUE=1"), .later_member = 7 };
    newer.o.struct_size = sizeof newer;
    if (CHECK_OK(kiln_program_create(ctx, "KILN_KERNEL void f(void) {}", &newer.o, &p)))
        kiln_program_release(p);
    p = NULL;
    /* language guards */
    kiln_device_info info;
    kiln_device_get_info(kiln_queue_device(q), &info);
    kiln_program_opts lang = { .struct_size = sizeof lang,
                               .language = info.backend == KILN_BACKEND_OPENCL
                                               ? KILN_LANG_CUDA_C
                                               : KILN_LANG_OPENCL_C };
    CHECK_STATUS(kiln_program_create(ctx, "KILN_KERNEL void f(void) {}", &lang, &p),
                 KILN_ERROR_UNSUPPORTED);
    lang.language = (kiln_language)9;
    CHECK_STATUS(kiln_program_create(ctx, "KILN_KERNEL void f(void) {}", &lang, &p),
                 KILN_ERROR_INVALID_ARGUMENT);
    if (info.languages == 0) /* a backend of the portable dialect only (host) */
        return;
    lang.language = info.backend == KILN_BACKEND_OPENCL ? KILN_LANG_OPENCL_C : KILN_LANG_CUDA_C;
    const char *native = info.backend == KILN_BACKEND_OPENCL
                             ? "__kernel void nat(__global int *x) { x[get_global_id(0)] = 5; }"
                             : "extern \"C\" __global__ void nat(int *x) { x[threadIdx.x] = 5; }";
    CHECK_OK(kiln_program_create(ctx, native, &lang, &p));
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "nat", &k));
    KT_RELEASE(k, p);
    /* a successful build after a failed one: the log stays readable */
    CHECK(kiln_last_build_log() != NULL);
}

static void test_files_and_cache(kiln_queue *q) {
    kiln_context *ctx = kiln_queue_context(q);
    kiln_device *dev = kiln_queue_device(q);
    char path[256];
    snprintf(path, sizeof path, "/tmp/kiln_test_core_program_%d.cl", (int)getpid());
    char src[512];
    /* a source never seen before (not even by an earlier run of this test
     * with the same cache), so the first build is a real one */
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(src, sizeof src,
             "/* %d %lld %ld */ KILN_KERNEL void fromfile(KILN_GLOBAL int *x) { "
             "x[kiln_global_id(0)] += 1; }\n",
             (int)getpid(), (long long)ts.tv_sec, (long)ts.tv_nsec);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (!f)
        return;
    fputs(src, f);
    fclose(f);
    kiln_program *p = NULL;
    CHECK_OK(kiln_program_create_from_file(ctx, path, NULL, &p));
    CHECK(kiln_program_from_cache(p, dev) == 0);
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_kernel_create(p, "fromfile", &k));
    kiln_kernel_release(k);
    /* the same source in the same context: memory cache, same answer */
    kiln_program *p2 = NULL;
    CHECK_OK(kiln_program_create(ctx, src, NULL, &p2));
    CHECK(kiln_program_from_cache(p2, dev) == 0);
    kiln_program_release(p2);
    /* a new context: from the disk cache */
    kiln_context *ctx2 = NULL;
    CHECK_OK(kiln_context_create(&dev, 1, &ctx2));
    CHECK_OK(kiln_program_create(ctx2, src, NULL, &p2));
    CHECK_MSG(kiln_program_from_cache(p2, dev) == 1,
              "second build should come from the disk cache");
    kiln_queue *q2 = NULL;
    CHECK_OK(kiln_queue_create(ctx2, dev, 0, &q2));
    CHECK_OK(kiln_kernel_create(p2, "fromfile", &k));
    kiln_buffer *B = NULL;
    int vals[5] = { 1, 2, 3, 4, 5 };
    CHECK_OK(kiln_buffer_create(ctx2, sizeof vals, 0, vals, &B));
    CHECK_OK(kiln_kernel_launch(q2, k, 1, (size_t[]){ 5 }, NULL, 1, (kiln_arg[]){ KILN_ARG_BUF(B) },
                                0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q2, B, 0, sizeof vals, vals));
    CHECK(vals[0] == 2 && vals[4] == 6);
    KT_RELEASE(B, k, q2, p2, ctx2);
    /* no_cache: built again */
    CHECK_OK(kiln_context_create(&dev, 1, &ctx2));
    kiln_program_opts nc = { .struct_size = sizeof nc, .no_cache = 1 };
    CHECK_OK(kiln_program_create(ctx2, src, &nc, &p2));
    CHECK(kiln_program_from_cache(p2, dev) == 0);
    KT_RELEASE(p2, ctx2, p);
    unlink(path);
    /* unreadable files */
    CHECK_STATUS(kiln_program_create_from_file(ctx, "/nonexistent/dir/k.cl", NULL, &p),
                 KILN_ERROR_IO);
    CHECK(p == NULL);
    CHECK_MSG(strstr(kiln_last_error_message(), "/nonexistent/dir/k.cl") &&
                  strstr(kiln_last_error_message(), "No such file"),
              "%s", kiln_last_error_message());
    CHECK_STATUS(kiln_program_create_from_file(ctx, "/tmp", NULL, &p), KILN_ERROR_IO);
}

/* KILN_DUMP_SOURCE: the whole source, options first, one file per build. */
static void test_dump_source(kiln_queue *q) {
    char dir[] = "/tmp/kiln-dump-XXXXXX";
    if (mkdtemp(dir) == NULL) {
        CHECK_MSG(0, "mkdtemp: %s", dir);
        return;
    }
    setenv("KILN_DUMP_SOURCE", dir, 1);
    kiln_program *p = NULL;
    CHECK_OK(
        kiln_program_create(kiln_queue_context(q),
                            "KILN_KERNEL void dumped_kernel_77(KILN_GLOBAL int *x) { x[0] = 77; }",
                            &KILN_PROGRAM_OPTS(.build_options = "-DDUMP_MARK=1"), &p));
    unsetenv("KILN_DUMP_SOURCE");
    kiln_program_release(p);
    char cmd[128], line[4096];
    snprintf(cmd, sizeof cmd, "cat %s/kiln-*.txt 2>/dev/null", dir);
    FILE *f = popen(cmd, "r");
    int options = 0, kernel = 0;
    while (f && fgets(line, sizeof line, f)) {
        options |= strstr(line, "// options: -DDUMP_MARK=1") != NULL;
        kernel |= strstr(line, "dumped_kernel_77") != NULL;
    }
    if (f)
        pclose(f);
    CHECK_MSG(options && kernel, "dump in %s: options line %d, kernel %d", dir, options, kernel);
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    CHECK(system(cmd) == 0);
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(test_programs, test_build_errors, test_files_and_cache,
                             test_dump_source);
    return kt_report();
}
