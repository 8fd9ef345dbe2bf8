/* The CUDA backend, driven directly through its table (kiln__backend_cuda).
 *
 * Part 1 runs wherever NVRTC can be loaded, GPU or not: the dialect prelude
 * compiles, build errors carry a log with the user's line numbers, options
 * are translated, cubin validation refuses damaged images, block sizes
 * divide the global size.
 * Part 2 needs libcuda.so.1 and a device. Where either part cannot run the
 * test reports a skip (KT_SKIP, exit 77) once everything that did run has
 * passed: a failure still fails it. Every failing
 * check prints the backend's message, which names the CUDA call and its
 * CUresult. */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"

static const kiln__backend *B = &kiln__backend_cuda;

/* A hang on the GPU (a stream that never sees a user event's flag, a lost
 * notification) must end the test with a message, not stall ctest. */
static const char *volatile phase = "start";
static void on_alarm(int sig) {
    static const char head[] = "\nFAIL watchdog: no progress for 120 s in phase: ";
    (void)sig;
    ssize_t w = write(2, head, sizeof head - 1);
    w = write(2, phase, strlen(phase));
    w = write(2, "\n", 1);
    (void)w;
    _exit(2);
}
#define PHASE(s) (phase = (s), alarm(120))

/* ------------------------------------------------------------ kernels */

static const char *k_source =
    "KILN_KERNEL void group_sum(KILN_GLOBAL const int *in, KILN_GLOBAL int *sums,\n"
    "                           KILN_GLOBAL int *total, KILN_GLOBAL int *maxv, uint n)\n"
    "{\n"
    "    KILN_LOCAL int tile[256];\n"
    "    size_t l = kiln_local_id(0), g = kiln_global_id(0);\n"
    "    int v = g < n ? in[g] : 0;\n"
    "    tile[l] = v;\n"
    "    kiln_barrier();\n"
    "    for (size_t s = kiln_local_size(0) / 2; s > 0; s /= 2) {\n"
    "        if (l < s) tile[l] += tile[l + s];\n"
    "        kiln_barrier();\n"
    "    }\n"
    "    if (l == 0) { sums[kiln_group_id(0)] = tile[0]; kiln_atomic_add_int(total, tile[0]); }\n"
    "    if (g < n) kiln_atomic_max_int(maxv, v);\n"
    "}\n"
    "KILN_KERNEL void axpb(KILN_GLOBAL float *y, KILN_GLOBAL const float *x, float a, long b)\n"
    "{\n"
    "    size_t i = kiln_global_id(0);\n"
    "    y[i] = mad(a, x[i], (float)b) + clamp(0.0f, -1.0f, 1.0f) + fmin(0.0f, 1.0f);\n"
    "}\n"
    "KILN_KERNEL void ids2d(KILN_GLOBAL uint *out)\n"
    "{\n"
    "    size_t x = kiln_global_id(0), y = kiln_global_id(1);\n"
    "    out[y * kiln_global_size(0) + x] = (uint)(x + 1000 * y) + (uint)(kiln_num_groups(0) * "
    "0);\n"
    "}\n"
    "KILN_KERNEL void empty3(KILN_GLOBAL int *a, int b, float c) { }\n"
    "KILN_KERNEL void set_one(KILN_GLOBAL int *p) { p[kiln_global_id(0)] = 1; }\n"
    "/* two local-memory parameters (KILN_LOCAL int *x) must not overlap */\n"
    "KILN_KERNEL void local_sums(KILN_GLOBAL const int *in, KILN_GLOBAL int *out,\n"
    "                            KILN_LOCAL int *a, KILN_LOCAL\n"
    "                            float *KILN_RESTRICT b)\n"
    "{\n"
    "    KILN_LOCAL int fixed[4];\n"
    "    size_t l = kiln_local_id(0), n = kiln_local_size(0);\n"
    "    a[l] = in[kiln_global_id(0)];\n"
    "    b[l] = 1.0f;\n"
    "    if (l < 4) fixed[l] = 0;\n"
    "    kiln_barrier();\n"
    "    if (l == 0) {\n"
    "        int s = fixed[0]; float f = 0;\n"
    "        for (size_t i = 0; i < n; i++) { s += a[i]; f += *(b + i); }\n"
    "        out[kiln_group_id(0)] = (int)f == (int)n ? s : -999999;\n"
    "    }\n"
    "}\n"
    "KILN_KERNEL void spin(KILN_GLOBAL float *p, int iters)\n"
    "{\n"
    "    size_t i = kiln_global_id(0); float v = p[i];\n"
    "    for (int k = 0; k < iters; k++) v = sqrt(v * v + 1.0f);\n"
    "    p[i] = v;\n"
    "}\n";

static char *with_prelude(const char *src) {
    const char *pre = kiln__embedded_file(B->prelude_file);
    size_t a = strlen(pre), b = strlen(src);
    char *s = malloc(a + b + 1);
    if (!s)
        return NULL;
    memcpy(s, pre, a);
    memcpy(s + a, src, b + 1);
    return s;
}

/* -------------------------------------------- part 1: no GPU needed */

static void test_pick_block(void) {
    int maxb[3] = { 1024, 1024, 64 };
    size_t gs[] = { 1, 2, 7, 97, 255, 256, 257, 1000, 1024, 65537, 1u << 20, 999983 };
    for (size_t i = 0; i < sizeof gs / sizeof gs[0]; i++) {
        size_t g[3] = { gs[i], 1, 1 }, b[3];
        kiln__cuda_pick_block(1, g, 1024, maxb, b);
        CHECK_MSG(b[0] >= 1 && b[0] <= 256 && g[0] % b[0] == 0, "global %zu block %zu", g[0], b[0]);
    }
    size_t g2[3] = { 1000, 37, 1 }, b2[3];
    kiln__cuda_pick_block(2, g2, 1024, maxb, b2);
    CHECK(g2[0] % b2[0] == 0 && g2[1] % b2[1] == 0 && b2[0] * b2[1] <= 256);
    size_t g3[3] = { 8, 8, 128 }, b3[3];
    kiln__cuda_pick_block(3, g3, 128, maxb, b3);
    CHECK(b3[0] * b3[1] * b3[2] <= 128 && g3[2] % b3[2] == 0);
    size_t g4[3] = { 512, 1, 1 }, b4[3];
    kiln__cuda_pick_block(1, g4, 64, maxb, b4); /* a register-heavy kernel */
    CHECK(b4[0] == 64);
}

/* What the table says about the backend (no driver needed). */
static void test_table(void) {
    CHECK(B->abi == KILN__BACKEND_ABI);
    CHECK(B->kind == KILN_BACKEND_CUDA);
    CHECK(strcmp(B->name, "cuda") == 0);
    CHECK(B->selector_prefix && strcmp(B->selector_prefix, "cuda") == 0);
    CHECK(B->languages == 1u << KILN_LANG_CUDA_C);
    /* the default choice takes CUDA before OpenCL on one device type */
    CHECK(B->priority > kiln__backend_opencl.priority);
    CHECK(B->prelude_file && strcmp(B->prelude_file, "prelude_cuda.h") == 0);
    CHECK(kiln__embedded_file(B->prelude_file) != NULL);
    CHECK(B->install_hint && strstr(B->install_hint, "libcuda.so.1") != NULL);
}

/* Points every section of a cubin (after the null one) far outside the
 * data: a damage the driver could not see, as it is given no size. */
static void damage_sections(unsigned char *cubin, size_t size) {
    uint64_t shoff = 0;
    uint16_t shnum = 0;
    memcpy(&shoff, cubin + 40, 8); /* ELF64, little-endian like the host */
    memcpy(&shnum, cubin + 60, 2);
    CHECK(shnum > 1 && shoff <= size && (uint64_t)shnum * 64 <= size - shoff);
    for (uint16_t i = 1; shnum > 1 && i < shnum && shoff + (i + 1) * 64ull <= size; i++)
        memset(cubin + shoff + i * 64ull + 24, 0xee, 8); /* sh_offset */
}

/* Returns 0 when NVRTC cannot be loaded (nothing checked). */
static int test_nvrtc(void) {
    if (!kiln__cuda_nvrtc_ready()) {
        printf("NVRTC (libnvrtc.so) not found: the compile checks cannot run\n");
        return 0;
    }
    const char *pre = kiln__embedded_file(B->prelude_file);
    CHECK(strstr(pre, "KILN_BACKEND_CUDA") != NULL);
    size_t pl = strlen(pre);
    CHECK(pl > 10 && strstr(pre, "#line 1") != NULL && strcmp(pre + pl - 8, "#line 1\n") == 0);

    char *src = with_prelude(k_source);
    void *bin = NULL;
    size_t size = 0;
    int is_ptx = -1;
    char *log = NULL;
    CHECK_OK(kiln__cuda_compile(src,
                                "-DUNUSED=1 -D OTHER=2 -cl-fast-relaxed-math -cl-std=CL1.2 -O3", 90,
                                &bin, &size, &is_ptx, &log));
    if (log && log[0])
        printf("sm_90 build log: %s\n", log);
    const char *why = NULL;
    CHECK(bin && size > 64 && is_ptx == 0);
    if (bin) {
        CHECK(kiln__cuda_check_image(bin, size, &why) == 0);
        CHECK(kiln__cuda_check_image(bin, size / 2, &why) != 0);
        CHECK(kiln__cuda_check_image(bin, 40, &why) != 0);
        unsigned char *bad = malloc(size);
        memcpy(bad, bin, size);
        bad[1] ^= 0xff; /* magic */
        CHECK(kiln__cuda_check_image(bad, size, &why) != 0);
        memcpy(bad, bin, size);
        memset(bad + 40, 0xff, 8); /* section header offset */
        CHECK(kiln__cuda_check_image(bad, size, &why) != 0);
        memcpy(bad, bin, size);
        damage_sections(bad, size);
        why = NULL;
        CHECK(kiln__cuda_check_image(bad, size, &why) != 0);
        CHECK_MSG(why && strstr(why, "section lies outside"), "why: %s", why ? why : "(null)");
        for (size_t i = 0; i < size; i++)
            bad[i] = (unsigned char)kt_rand_u64();
        CHECK(kiln__cuda_check_image(bad, size, &why) != 0);
        free(bad);
    }
    CHECK(kiln__cuda_check_image((const unsigned char *)"//\n.version 8.0\n", 16, &why) == 0);
    KT_FREE(bin, log);

    /* other architectures, including a future one (PTX fallback) */
    unsigned ccs[] = { 75, 80, 86, 89, 90, 999 };
    for (size_t i = 0; i < sizeof ccs / sizeof ccs[0]; i++) {
        bin = NULL;
        log = NULL;
        kiln_status st = kiln__cuda_compile(src, NULL, ccs[i], &bin, &size, &is_ptx, &log);
        CHECK_MSG(st == KILN_OK, "cc %u: %s", ccs[i], kiln_last_error_message());
        if (ccs[i] == 999)
            CHECK(st != KILN_OK || is_ptx == 1);
        KT_FREE(bin, log);
    }
    free(src);

    /* a build error: KILN_ERROR_BUILD, the log names the user's line 3 */
    src = with_prelude(
        "KILN_KERNEL void bad(KILN_GLOBAL int *p)\n{\n    p[0] = undefined_name;\n}\n");
    bin = NULL;
    log = NULL;
    CHECK_STATUS(kiln__cuda_compile(src, NULL, 90, &bin, &size, &is_ptx, &log), KILN_ERROR_BUILD);
    CHECK(bin == NULL);
    CHECK_MSG(log && strstr(log, "undefined_name") && strstr(log, "(3)"), "log: %s",
              log ? log : "(null)");
    CHECK(strstr(kiln_last_error_message(), "NVRTC") != NULL);
    KT_FREE(log, src);

    /* a local-memory parameter split over lines keeps the user's line
     * numbers (the error is on line 5) */
    src = with_prelude("KILN_KERNEL void lp(KILN_GLOBAL int *p, KILN_LOCAL\n"
                       "   const int *\n"
                       "   t) // KILN_LOCAL int *not_a_param)\n"
                       "{\n"
                       "    p[0] = t[0] + undefined_after_local;\n"
                       "}\n");
    bin = NULL;
    log = NULL;
    CHECK_STATUS(kiln__cuda_compile(src, NULL, 90, &bin, &size, &is_ptx, &log), KILN_ERROR_BUILD);
    CHECK_MSG(log && strstr(log, "undefined_after_local") && strstr(log, "(5)"), "log: %s",
              log ? log : "(null)");
    KT_FREE(log, src);

    src = with_prelude("KILN_KERNEL void ok(KILN_GLOBAL int *p) { p[0] = 1; }\n");
    log = NULL;
    CHECK_STATUS(kiln__cuda_compile(src, "--no-such-option", 90, &bin, &size, &is_ptx, &log),
                 KILN_ERROR_BUILD);
    CHECK(log != NULL);
    free(log);
    /* the example of docs/dialect.md */
    free(src);
    src = with_prelude(
        "#ifdef KILN_BACKEND_CUDA\n__constant__\n#endif\n"
        "KILN_CONSTANT float t[4] = {1, 2, 3, 4};\n"
        "KILN_KERNEL void block_sums(KILN_GLOBAL const float *x, KILN_GLOBAL float *sums,\n"
        "                            KILN_GLOBAL float *total, uint n)\n"
        "{\n"
        "    KILN_LOCAL float tile[256];\n"
        "    size_t l = kiln_local_id(0), i = kiln_global_id(0);\n"
        "    tile[l] = i < n ? x[i] * t[0] : 0.0f;\n"
        "    kiln_barrier();\n"
        "    for (size_t s = kiln_local_size(0) / 2; s > 0; s /= 2) {\n"
        "        if (l < s)\n"
        "            tile[l] += tile[l + s];\n"
        "        kiln_barrier();\n"
        "    }\n"
        "    if (l == 0) {\n"
        "        sums[kiln_group_id(0)] = tile[0];\n"
        "        kiln_atomic_add_float(total, tile[0]);\n"
        "        kiln_atomic_add_ulong((KILN_GLOBAL ulong *)0 + 0, (ulong)0) ;\n"
        "    }\n"
        "    float m = sqrt(fabs(x[0])) + rsqrt(2.0f) + fmax(exp(0.0f), log(1.0f)) + sin(0.0f) + "
        "cos(0.0f)\n"
        "            + pow(2.0f, 2.0f) + floor(1.5f) + ceil(1.5f) + fma(1.0f, 2.0f, 3.0f) + "
        "hypot(3.0f, 4.0f);\n"
        "    double dm = sqrt(2.0) + rsqrt(2.0) + hypot(3.0, 4.0) + clamp(5.0, 0.0, 1.0) + "
        "mad(1.0, 2.0, 3.0);\n"
        "    int im = min(3, 4) + max(3, 4) + clamp(7, 0, 5) + kiln_atomic_cas_int((int *)0 + 0, "
        "0, 0) * 0;\n"
        "    kiln_int64 big = (kiln_int64)max((long)1, (long)2) + (kiln_int64)min((ulong)1, "
        "(ulong)2);\n"
        "    if (n == 12345u) sums[0] = m + (float)dm + (float)im + (float)big + "
        "(float)kiln_num_groups(1);\n"
        "}\n");
    log = NULL;
    bin = NULL;
    CHECK_MSG(kiln__cuda_compile(src, NULL, 90, &bin, &size, &is_ptx, &log) == KILN_OK,
              "dialect example: %s", log ? log : kiln_last_error_message());
    KT_FREE(bin, log);
    /* native CUDA C compiles unchanged with the prelude in front */
    free(src);
    src = with_prelude(
        "extern \"C\" __global__ void native(float *p) { p[threadIdx.x] = rsqrt(4.0f); }\n");
    log = NULL;
    bin = NULL;
    CHECK_OK(kiln__cuda_compile(src, NULL, 90, &bin, &size, &is_ptx, &log));
    KT_FREE(bin, log, src);
    return 1;
}

/* ------------------------------------------- part 2: on a CUDA device */

static atomic_int notify_count;
static atomic_int notify_failed;
static void on_notify(void *arg, int failed) {
    atomic_fetch_add(&notify_count, 1);
    if (failed)
        atomic_fetch_add(&notify_failed, 1);
    (void)arg;
}

static int wait_count(atomic_int *c, int want) {
    for (int i = 0; i < 2000 && atomic_load(c) < want; i++)
        usleep(1000);
    usleep(2000); /* a second (wrong) call would show up here */
    return atomic_load(c);
}

static void fill_random(void *p, size_t n) {
    unsigned char *c = p;
    for (size_t i = 0; i < n; i++)
        c[i] = (unsigned char)(kt_rand_u64() >> 24);
}

static void test_buffers(void *ctx, void *q) {
    size_t sizes[64];
    size_t ns = kt_awkward_sizes(sizes, 1u << 20);
    for (size_t i = 0; i < ns; i++) {
        size_t n = sizes[i];
        if (n == 0) {
            void *b = (void *)1;
            CHECK_STATUS(B->buffer_create(ctx, 0, 0, NULL, &b), KILN_ERROR_INVALID_ARGUMENT);
            CHECK(b == NULL);
            continue;
        }
        unsigned char *h = malloc(n), *r = malloc(n), *r2 = malloc(n);
        fill_random(h, n);
        void *b = NULL, *b2 = NULL;
        if (!CHECK_OK(B->buffer_create(ctx, n, 0, NULL, &b)) ||
            !CHECK_OK(B->buffer_create(ctx, n, 0, h, &b2))) {
            B->buffer_release(b);
            free(h), free(r), free(r2);
            continue;
        }
        CHECK_OK(B->buffer_write(q, b, 0, n, h, 1, 0, NULL, NULL));
        memset(r, 0, n);
        CHECK_OK(B->buffer_read(q, b, 0, n, r, 1, 0, NULL, NULL));
        CHECK_MSG(memcmp(h, r, n) == 0, "round trip of %zu bytes", n);
        memset(r2, 0, n);
        CHECK_OK(B->buffer_read(q, b2, 0, n, r2, 1, 0, NULL, NULL));
        CHECK_MSG(memcmp(h, r2, n) == 0, "create with host data, %zu bytes", n);
        /* partial, non-blocking, at an odd offset, with events */
        if (n > 3) {
            size_t off = n / 3, len = n - off - 1;
            void *ev = NULL, *ev2 = NULL;
            CHECK_OK(B->buffer_copy(q, b, off, b2, 1, len, 0, NULL, &ev));
            CHECK_OK(B->buffer_read(q, b2, 1, len, r2, 0, 1, &ev, &ev2));
            CHECK_OK(B->event_wait(1, &ev2));
            CHECK_MSG(memcmp(r2, h + off, len) == 0, "copy at offsets, %zu bytes", n);
            B->event_release(ev);
            B->event_release(ev2);
        }
        B->buffer_release(b);
        B->buffer_release(b2);
        free(h), free(r), free(r2);
    }
    /* sub-buffers */
    size_t n = 4096 + 77;
    unsigned char *h = malloc(n), *r = malloc(n);
    fill_random(h, n);
    void *b = NULL, *sub = NULL;
    CHECK_OK(B->buffer_create(ctx, n, 0, h, &b));
    CHECK_OK(B->buffer_create_sub(b, 256, 1000, &sub));
    if (sub) {
        CHECK_OK(B->buffer_read(q, sub, 0, 1000, r, 1, 0, NULL, NULL));
        CHECK(memcmp(r, h + 256, 1000) == 0);
        B->buffer_release(b); /* the sub-buffer keeps the parent alive */
        b = NULL;
        CHECK_OK(B->buffer_write(q, sub, 10, 5, "hello", 1, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, sub, 0, 1000, r, 1, 0, NULL, NULL));
        CHECK(memcmp(r + 10, "hello", 5) == 0 && memcmp(r, h + 256, 10) == 0);
    }
    B->buffer_release(sub);
    B->buffer_release(b);
    /* pinned */
    void *p = NULL;
    CHECK_OK(B->buffer_create(ctx, n, KILN_BUFFER_HOST_PINNED, h, &p));
    if (p) {
        memset(r, 0, n);
        CHECK_OK(B->buffer_read(q, p, 0, n, r, 1, 0, NULL, NULL));
        CHECK(memcmp(r, h, n) == 0);
        void *m = NULL;
        CHECK_OK(B->buffer_map(q, p, KILN_MAP_READ | KILN_MAP_WRITE, 100, 50, &m));
        if (m) {
            CHECK(memcmp(m, h + 100, 50) == 0);
            memset(m, 0x5a, 50);
            CHECK_OK(B->buffer_unmap(q, p, m, 0, NULL, NULL));
            CHECK_OK(B->buffer_read(q, p, 100, 50, r, 1, 0, NULL, NULL));
            CHECK(r[0] == 0x5a && r[49] == 0x5a);
        }
        B->buffer_release(p);
    }
    /* map/unmap of device memory (staging) */
    CHECK_OK(B->buffer_create(ctx, n, 0, h, &b));
    if (b) {
        void *m = NULL;
        CHECK_OK(B->buffer_map(q, b, KILN_MAP_READ | KILN_MAP_WRITE, 3, 1000, &m));
        if (m) {
            CHECK(memcmp(m, h + 3, 1000) == 0);
            memset(m, 0xa5, 1000);
            CHECK_STATUS(B->buffer_unmap(q, b, (char *)m + 1, 0, NULL, NULL),
                         KILN_ERROR_INVALID_ARGUMENT);
            CHECK_OK(B->buffer_unmap(q, b, m, 0, NULL, NULL));
            CHECK_OK(B->buffer_read(q, b, 0, n, r, 1, 0, NULL, NULL));
            CHECK(r[3] == 0xa5 && r[1002] == 0xa5 && r[2] == h[2] && r[1003] == h[1003]);
        }
        CHECK_OK(B->buffer_map(q, b, KILN_MAP_WRITE_INVALIDATE, 0, 16, &m));
        if (m) {
            memset(m, 7, 16);
            CHECK_OK(B->buffer_unmap(q, b, m, 0, NULL, NULL));
            CHECK_OK(B->buffer_read(q, b, 0, 16, r, 1, 0, NULL, NULL));
            CHECK(r[0] == 7 && r[15] == 7);
        }
        B->buffer_release(b);
    }
    KT_FREE(h, r);
}

static void test_fill(void *ctx, void *q) {
    size_t psizes[] = { 1, 2, 4, 8, 16, 32, 64, 128 };
    for (size_t i = 0; i < sizeof psizes / sizeof psizes[0]; i++) {
        size_t ps = psizes[i], count = 1000 + 3, n = ps * (count + 10);
        unsigned char pat[128], orig[128], *h = malloc(n), *r = malloc(n);
        fill_random(pat, ps);
        memcpy(orig, pat, ps);
        fill_random(h, n);
        void *b = NULL, *ev = NULL;
        CHECK_OK(B->buffer_create(ctx, n, 0, h, &b));
        if (!b) {
            free(h), free(r);
            continue;
        }
        size_t off = ps * 3; /* odd multiples of the pattern */
        CHECK_OK(B->buffer_fill(q, b, pat, ps, off, ps * count, 0, NULL, &ev));
        memset(pat, 0, sizeof pat); /* the backend must have copied it */
        CHECK_OK(B->event_wait(1, &ev));
        B->event_release(ev);
        CHECK_OK(B->buffer_read(q, b, 0, n, r, 1, 0, NULL, NULL));
        int ok = memcmp(r, h, off) == 0 &&
                 memcmp(r + off + ps * count, h + off + ps * count, n - off - ps * count) == 0;
        for (size_t k = 0; k < count && ok; k++)
            ok = memcmp(r + off + k * ps, orig, ps) == 0;
        CHECK_MSG(ok, "fill with a %zu-byte pattern", ps);
        /* the pattern itself: first element against a fresh fill */
        unsigned char pat2[128];
        for (size_t k = 0; k < ps; k++)
            pat2[k] = (unsigned char)(k * 7 + 1);
        CHECK_OK(B->buffer_fill(q, b, pat2, ps, 0, ps, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, b, 0, ps, r, 1, 0, NULL, NULL));
        CHECK_MSG(memcmp(r, pat2, ps) == 0, "pattern bytes, size %zu", ps);
        B->buffer_release(b);
        KT_FREE(h, r);
    }
}

static void *build(void *ctx, const kiln__bdevice *dev, const char *src) {
    char *s = with_prelude(src);
    void *prog = NULL;
    char *log = NULL;
    kiln_status st = B->program_build(ctx, dev, s, "-DKILN_TEST=1", &prog, &log);
    CHECK_MSG(st == KILN_OK, "build: %s\n%s", kiln_last_error_message(), log ? log : "");
    KT_FREE(log, s);
    return prog;
}

static void test_kernels(void *ctx, void *q, const kiln__bdevice *dev) {
    void *prog = build(ctx, dev, k_source);
    if (!prog)
        return;
    void *k = NULL;
    CHECK_STATUS(B->kernel_create(prog, "no_such_kernel", &k), KILN_ERROR_KERNEL_NOT_FOUND);
    /* group sums with local memory, barriers, atomics */
    CHECK_OK(B->kernel_create(prog, "group_sum", &k));
    if (k) {
        size_t groups = 37, n = groups * 256 - 100;
        int *in = malloc(groups * 256 * sizeof(int)), *sums = malloc(groups * sizeof(int));
        for (size_t i = 0; i < n; i++)
            in[i] = (int)(kt_rand_u64() % 2001) - 1000;
        void *bin = NULL, *bsums = NULL, *btot = NULL, *bmax = NULL;
        int zero = 0, minv = -2147483647 - 1;
        CHECK_OK(B->buffer_create(ctx, n * sizeof(int), 0, in, &bin));
        CHECK_OK(B->buffer_create(ctx, groups * sizeof(int), 0, NULL, &bsums));
        CHECK_OK(B->buffer_create(ctx, sizeof(int), 0, &zero, &btot));
        CHECK_OK(B->buffer_create(ctx, sizeof(int), 0, &minv, &bmax));
        unsigned un = (unsigned)n;
        kiln__barg a[5] = { { KILN_ARG_BUFFER, bin, NULL, 0 },
                            { KILN_ARG_BUFFER, bsums, NULL, 0 },
                            { KILN_ARG_BUFFER, btot, NULL, 0 },
                            { KILN_ARG_BUFFER, bmax, NULL, 0 },
                            { KILN_ARG_SCALAR, NULL, &un, 4 } };
        size_t global = groups * 256, local = 256;
        void *ev = NULL;
        CHECK_OK(B->kernel_launch(q, k, 1, &global, &local, 5, a, 0, NULL, &ev));
        CHECK_OK(B->event_wait(1, &ev));
        B->event_release(ev);
        int total = 0, mx = 0;
        CHECK_OK(B->buffer_read(q, bsums, 0, groups * sizeof(int), sums, 1, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, btot, 0, sizeof(int), &total, 1, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, bmax, 0, sizeof(int), &mx, 1, 0, NULL, NULL));
        int ref_total = 0, ref_max = minv, ok = 1;
        for (size_t g = 0; g < groups; g++) {
            int s = 0;
            for (size_t i = g * 256; i < (g + 1) * 256 && i < n; i++)
                s += in[i];
            ok &= sums[g] == s;
            ref_total += s;
        }
        for (size_t i = 0; i < n; i++)
            ref_max = in[i] > ref_max ? in[i] : ref_max;
        CHECK_MSG(ok, "per-group sums");
        CHECK_MSG(total == ref_total, "atomic total %d, expected %d", total, ref_total);
        CHECK_MSG(mx == ref_max, "atomic max %d, expected %d", mx, ref_max);
        /* a local size that does not divide the global size */
        size_t g_bad = 1000, l_bad = 256;
        CHECK_STATUS(B->kernel_launch(q, k, 1, &g_bad, &l_bad, 5, a, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        /* more local memory than a block has: refused before the launch */
        kiln__barg loc = { KILN_ARG_LOCAL, NULL, NULL, dev->info.local_mem_bytes + 1 };
        kiln__barg a2[5] = { a[0], a[1], a[2], loc, a[4] };
        CHECK_STATUS(B->kernel_launch(q, k, 1, &global, &local, 5, a2, 0, NULL, NULL),
                     KILN_ERROR_INVALID_ARGUMENT);
        B->buffer_release(bin), B->buffer_release(bsums);
        B->buffer_release(btot), B->buffer_release(bmax);
        B->kernel_release(k);
        free(in), free(sums);
    }
    /* KILN_LOCAL pointer parameters: dynamic shared memory at launch;
     * 1024 items x 2 x (12 or 24 words) of padding pass the default 48 KiB
     * per block where the device's opt-in limit allows (Hopper: 227 KiB) */
    k = NULL;
    CHECK_OK(B->kernel_create(prog, "local_sums", &k));
    if (k) {
        size_t lsizes[] = { 1, 32, 96, 256, 1024 };
        for (size_t t = 0; t < sizeof lsizes / sizeof lsizes[0] + 2; t++) {
            size_t lsz = lsizes[t < 5 ? t : 4], groups = 13, n = groups * lsz;
            /* the last two rounds: 96 KiB and 192 KiB of local memory */
            size_t pad = t < 5 ? 1 : (t == 5 ? 12 : 24);
            if (2 * lsz * pad * sizeof(int) > dev->info.local_mem_bytes)
                continue;
            int *in = malloc(n * sizeof(int)), out[13];
            for (size_t i = 0; i < n; i++)
                in[i] = (int)(kt_rand_u64() % 2001) - 1000;
            void *bi = NULL, *bo = NULL;
            CHECK_OK(B->buffer_create(ctx, n * sizeof(int), 0, in, &bi));
            CHECK_OK(B->buffer_create(ctx, sizeof out, 0, NULL, &bo));
            kiln__barg la[4] = { { KILN_ARG_BUFFER, bi, NULL, 0 },
                                 { KILN_ARG_BUFFER, bo, NULL, 0 },
                                 { KILN_ARG_LOCAL, NULL, NULL, lsz * pad * sizeof(int) },
                                 { KILN_ARG_LOCAL, NULL, NULL, lsz * pad * sizeof(float) } };
            kiln_status st = B->kernel_launch(q, k, 1, &n, &lsz, 4, la, 0, NULL, NULL);
            CHECK_MSG(st == KILN_OK, "local_sums, local %zu x %zu: %s", lsz, pad,
                      kiln_last_error_message());
            if (st == KILN_OK &&
                CHECK_OK(B->buffer_read(q, bo, 0, sizeof out, out, 1, 0, NULL, NULL))) {
                CHECK_MSG(kt_group_sums_ok(in, out, groups, lsz),
                          "two local-memory parameters, local size %zu", lsz);
            }
            B->buffer_release(bi), B->buffer_release(bo);
            free(in);
        }
        B->kernel_release(k);
    }
    /* scalars of two sizes, local chosen by the backend at awkward sizes */
    k = NULL;
    CHECK_OK(B->kernel_create(prog, "axpb", &k));
    if (k) {
        size_t sizes[64];
        size_t ns = kt_awkward_sizes(sizes, 300000);
        for (size_t s = 0; s < ns; s++) {
            size_t n = sizes[s];
            size_t alloc = n ? n : 1;
            float *x = malloc(alloc * sizeof(float)), *y = malloc(alloc * sizeof(float));
            for (size_t i = 0; i < n; i++)
                x[i] = (float)kt_rand_unit() * 10.0f - 5.0f;
            void *bx = NULL, *by = NULL;
            CHECK_OK(B->buffer_create(ctx, alloc * sizeof(float), 0, x, &bx));
            CHECK_OK(B->buffer_create(ctx, alloc * sizeof(float), 0, NULL, &by));
            float av = 2.5f;
            int64_t bv = -3;
            kiln__barg a[4] = { { KILN_ARG_BUFFER, by, NULL, 0 },
                                { KILN_ARG_BUFFER, bx, NULL, 0 },
                                { KILN_ARG_SCALAR, NULL, &av, 4 },
                                { KILN_ARG_SCALAR, NULL, &bv, 8 } };
            void *ev = NULL;
            kiln_status st = B->kernel_launch(q, k, 1, &n, NULL, 4, a, 0, NULL, &ev);
            CHECK_MSG(st == KILN_OK, "launch n=%zu: %s", n, kiln_last_error_message());
            if (st == KILN_OK) {
                CHECK_OK(B->event_wait(1, &ev));
                B->event_release(ev);
                if (n) {
                    CHECK_OK(B->buffer_read(q, by, 0, n * sizeof(float), y, 1, 0, NULL, NULL));
                    int ok = 1;
                    for (size_t i = 0; i < n && ok; i++) {
                        float want = 2.5f * x[i] - 3.0f, d = y[i] - want;
                        ok = d < 1e-4f && d > -1e-4f;
                    }
                    CHECK_MSG(ok, "axpb at n=%zu", n);
                }
            }
            B->buffer_release(bx), B->buffer_release(by);
            free(x), free(y);
        }
        B->kernel_release(k);
    }
    /* 2-D, backend-chosen blocks */
    k = NULL;
    CHECK_OK(B->kernel_create(prog, "ids2d", &k));
    if (k) {
        size_t g[2] = { 37, 11 }, n = 37 * 11;
        unsigned *out = malloc(n * sizeof(unsigned));
        void *b = NULL;
        CHECK_OK(B->buffer_create(ctx, n * sizeof(unsigned), 0, NULL, &b));
        kiln__barg a = { KILN_ARG_BUFFER, b, NULL, 0 };
        CHECK_OK(B->kernel_launch(q, k, 2, g, NULL, 1, &a, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, b, 0, n * sizeof(unsigned), out, 1, 0, NULL, NULL));
        int ok = 1;
        for (size_t y = 0; y < 11; y++)
            for (size_t xx = 0; xx < 37; xx++)
                ok &= out[y * 37 + xx] == (unsigned)(xx + 1000 * y);
        CHECK_MSG(ok, "2-D ids");
        B->buffer_release(b);
        B->kernel_release(k);
        free(out);
    }
    /* cubin round trip and damaged binaries */
    void *binary = NULL;
    size_t size = 0;
    CHECK_OK(B->program_binary(prog, &binary, &size));
    if (binary) {
        void *p2 = NULL;
        CHECK_OK(B->program_load(ctx, dev, binary, size, "", &p2));
        void *k2 = NULL;
        if (p2 && CHECK_OK(B->kernel_create(p2, "set_one", &k2))) {
            int zeros[64] = { 0 }, back[64];
            void *b = NULL;
            CHECK_OK(B->buffer_create(ctx, sizeof zeros, 0, zeros, &b));
            kiln__barg a = { KILN_ARG_BUFFER, b, NULL, 0 };
            size_t g = 64;
            CHECK_OK(B->kernel_launch(q, k2, 1, &g, NULL, 1, &a, 0, NULL, NULL));
            CHECK_OK(B->buffer_read(q, b, 0, sizeof back, back, 1, 0, NULL, NULL));
            CHECK(back[0] == 1 && back[63] == 1);
            B->buffer_release(b);
            B->kernel_release(k2);
        }
        B->program_release(p2);
        /* each damage is refused by kiln's own image check (cuModuleLoadData
         * takes no size and could read past the data): KILN_ERROR_BUILD */
        void *p3 = (void *)1;
        CHECK_STATUS(B->program_load(ctx, dev, binary, size / 2, "", &p3), KILN_ERROR_BUILD);
        CHECK(p3 == NULL);
        unsigned char *bad = malloc(size);
        for (size_t i = 0; i < size; i++)
            bad[i] = (unsigned char)kt_rand_u64();
        CHECK_STATUS(B->program_load(ctx, dev, bad, size, "", &p3), KILN_ERROR_BUILD);
        memcpy(bad, binary, size);
        damage_sections(bad, size);
        p3 = (void *)1;
        CHECK_STATUS(B->program_load(ctx, dev, bad, size, "", &p3), KILN_ERROR_BUILD);
        CHECK_MSG(p3 == NULL && strstr(kiln_last_error_message(), "section lies outside"),
                  "message: %s", kiln_last_error_message());
        CHECK_STATUS(B->program_load(ctx, dev, bad, 0, "", &p3), KILN_ERROR_BUILD);
        KT_FREE(bad, binary);
    }
    /* a build error through the table */
    char *s = with_prelude("KILN_KERNEL void broken(KILN_GLOBAL int *p) { p[0] = ; }\n");
    void *pb = NULL;
    char *log = NULL;
    CHECK_STATUS(B->program_build(ctx, dev, s, NULL, &pb, &log), KILN_ERROR_BUILD);
    CHECK(pb == NULL && log && strstr(log, "error"));
    KT_FREE(log, s);
    B->program_release(prog);
}

static void test_events(void *ctx, void *q, const kiln__bdevice *dev) {
    void *prog = build(ctx, dev, k_source);
    void *spin = NULL, *set1 = NULL;
    if (!prog || !CHECK_OK(B->kernel_create(prog, "spin", &spin)) ||
        !CHECK_OK(B->kernel_create(prog, "set_one", &set1))) {
        B->kernel_release(spin);
        B->program_release(prog);
        return;
    }
    size_t n = 1 << 16;
    void *b = NULL;
    CHECK_OK(B->buffer_create(ctx, n * sizeof(float), 0, NULL, &b));
    float zero = 0;
    CHECK_OK(B->buffer_fill(q, b, &zero, 4, 0, n * sizeof(float), 0, NULL, NULL));
    int iters = 2000;
    kiln__barg a[2] = { { KILN_ARG_BUFFER, b, NULL, 0 }, { KILN_ARG_SCALAR, NULL, &iters, 4 } };
    /* notify exactly once, profiling times ordered */
    void *ev = NULL;
    atomic_store(&notify_count, 0);
    atomic_store(&notify_failed, 0);
    CHECK_OK(B->kernel_launch(q, spin, 1, &n, NULL, 2, a, 0, NULL, &ev));
    CHECK_OK(B->event_notify(ev, on_notify, NULL));
    CHECK_OK(B->event_wait(1, &ev));
    CHECK(wait_count(&notify_count, 1) == 1);
    CHECK(atomic_load(&notify_failed) == 0);
    kiln_event_state state;
    CHECK_OK(B->event_state(ev, &state));
    CHECK(state == KILN_EVENT_COMPLETE);
    kiln_event_times t;
    if (CHECK_OK(B->event_times(ev, &t))) {
        CHECK_MSG(t.queued <= t.submitted && t.submitted <= t.started && t.started < t.ended,
                  "times %llu %llu %llu %llu", (unsigned long long)t.queued,
                  (unsigned long long)t.submitted, (unsigned long long)t.started,
                  (unsigned long long)t.ended);
        printf("spin kernel: %.1f us on the device\n", (double)(t.ended - t.started) / 1e3);
    }
    /* notify on a completed event: at once, exactly once */
    CHECK_OK(B->event_notify(ev, on_notify, NULL));
    CHECK(wait_count(&notify_count, 2) == 2);
    B->event_release(ev);

    /* a user event gates work; notify on both */
    PHASE("events: user event gating (cuStreamWaitValue32 on a pinned flag)");
    void *u = NULL, *e1 = NULL, *e2 = NULL;
    CHECK_OK(B->user_event_create(ctx, &u));
    int *flag = calloc(256, sizeof(int));
    void *bf = NULL;
    CHECK_OK(B->buffer_create(ctx, 256 * sizeof(int), 0, flag, &bf));
    kiln__barg af = { KILN_ARG_BUFFER, bf, NULL, 0 };
    size_t g = 256;
    atomic_store(&notify_count, 0);
    CHECK_OK(B->kernel_launch(q, set1, 1, &g, NULL, 1, &af, 1, &u, &e1));
    CHECK_OK(B->buffer_read(q, bf, 0, 256 * sizeof(int), flag, 0, 1, &e1, &e2));
    CHECK_OK(B->event_notify(e2, on_notify, NULL));
    CHECK_OK(B->event_notify(u, on_notify, NULL));
    usleep(50000);
    CHECK_OK(B->event_state(e2, &state));
    CHECK_MSG(state != KILN_EVENT_COMPLETE, "work ran before its user event was set");
    CHECK(atomic_load(&notify_count) == 0);
    CHECK_STATUS(B->event_times(u, &t), KILN_ERROR_WRONG_STATE);
    CHECK_OK(B->user_event_set(u, 0));
    CHECK_STATUS(B->user_event_set(u, 0), KILN_ERROR_WRONG_STATE);
    CHECK_OK(B->event_wait(1, &e2));
    CHECK(flag[0] == 1 && flag[255] == 1);
    CHECK(wait_count(&notify_count, 2) == 2);
    B->event_release(e1), B->event_release(e2), B->event_release(u);

    /* a failed user event: dependants report failure, notify says so */
    PHASE("events: failed user event");
    u = NULL, e1 = NULL;
    atomic_store(&notify_count, 0);
    atomic_store(&notify_failed, 0);
    CHECK_OK(B->user_event_create(ctx, &u));
    CHECK_OK(B->kernel_launch(q, set1, 1, &g, NULL, 1, &af, 1, &u, &e1));
    CHECK_OK(B->event_notify(e1, on_notify, NULL));
    CHECK_OK(B->user_event_set(u, 1));
    CHECK_STATUS(B->event_wait(1, &e1), KILN_ERROR_EVENT_FAILED);
    CHECK_OK(B->event_state(e1, &state));
    CHECK(state == KILN_EVENT_ERROR);
    CHECK(wait_count(&notify_count, 1) == 1 && atomic_load(&notify_failed) == 1);
    B->event_release(e1), B->event_release(u);

    /* markers: with and without a wait list */
    PHASE("events: markers");
    void *m = NULL, *m2 = NULL;
    CHECK_OK(B->kernel_launch(q, spin, 1, &n, NULL, 2, a, 0, NULL, &e1));
    CHECK_OK(B->queue_marker(q, 0, 0, NULL, &m));
    CHECK_OK(B->queue_marker(q, 1, 1, &e1, &m2));
    CHECK_OK(B->event_wait(1, &m));
    CHECK_OK(B->event_state(e1, &state));
    CHECK(state == KILN_EVENT_COMPLETE);
    CHECK_OK(B->event_wait(1, &m2));
    B->event_release(e1), B->event_release(m), B->event_release(m2);

    /* a second queue waits on an event of the first */
    PHASE("events: cross-queue wait");
    void *q2 = NULL;
    CHECK_OK(B->queue_create(ctx, dev, 0, &q2));
    if (q2) {
        int ones[4] = { 0 };
        CHECK_OK(B->buffer_write(q, bf, 0, sizeof ones, ones, 1, 0, NULL, NULL));
        CHECK_OK(B->kernel_launch(q, spin, 1, &n, NULL, 2, a, 0, NULL, &e1));
        CHECK_OK(B->kernel_launch(q, set1, 1, &g, NULL, 1, &af, 0, NULL, &e2));
        void *e3 = NULL;
        CHECK_OK(B->buffer_read(q2, bf, 0, sizeof ones, ones, 0, 1, &e2, &e3));
        CHECK_OK(B->event_wait(1, &e3));
        CHECK(ones[0] == 1 && ones[3] == 1);
        CHECK_OK(B->queue_finish(q2));
        B->event_release(e1), B->event_release(e2), B->event_release(e3);
        B->queue_release(q2);
    }
    CHECK_OK(B->queue_finish(q));
    CHECK_OK(B->queue_flush(q));
    free(flag);
    B->buffer_release(bf);
    B->buffer_release(b);
    B->kernel_release(spin);
    B->kernel_release(set1);
    B->program_release(prog);
}

/* Non-blocking transfers behind an unset user event must return at once and
 * be complete when their events are. CUDA copies between the device and
 * pageable memory, and host-to-host copies (HOST_PINNED buffers), can block
 * the host until the stream gets there: with the event set by this very
 * thread, that is a deadlock (the watchdog names the phase). */
static int still_pending(void *ev) {
    kiln_event_state st = KILN_EVENT_COMPLETE;
    usleep(20000);
    return B->event_state(ev, &st) == KILN_OK && st != KILN_EVENT_COMPLETE &&
           st != KILN_EVENT_ERROR;
}

static void test_gated_transfers(void *ctx, void *q) {
    size_t sizes[] = { 1, 3, 4096, 4097, 65537, (1u << 20) + 3 };
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
        PHASE("gated: async read into pageable memory, async write from it");
        size_t n = sizes[i], off = i % 2 ? 5 : 0, total = n + off + 7;
        unsigned char *h = malloc(total), *src = malloc(n), *orig = malloc(n);
        unsigned char *dst = calloc(1, n), *dst2 = calloc(1, n);
        fill_random(h, total);
        fill_random(src, n);
        memcpy(orig, src, n);
        void *b = NULL, *u = NULL, *er = NULL, *ew = NULL, *er2 = NULL;
        CHECK_OK(B->buffer_create(ctx, total, 0, h, &b));
        CHECK_OK(B->user_event_create(ctx, &u));
        if (b && u) {
            CHECK_OK(B->buffer_read(q, b, off, n, dst, 0, 1, &u, &er));
            CHECK_OK(B->buffer_write(q, b, off, n, src, 0, 0, NULL, &ew));
            /* the backend stages pageable sources before it returns (more
             * than kiln.h promises): the memory may change at once */
            memset(src, 0xee, n);
            CHECK_OK(B->buffer_read(q, b, off, n, dst2, 0, 0, NULL, &er2));
            CHECK_MSG(er && still_pending(er), "read of %zu bytes ran before its user event", n);
            CHECK_MSG(dst[0] == 0 && dst[n - 1] == 0, "data arrived before the user event");
            CHECK_OK(B->user_event_set(u, 0));
            CHECK_OK(B->event_wait(1, &er2));
            CHECK_OK(B->event_wait(1, &er));
            CHECK_OK(B->event_wait(1, &ew));
            CHECK_MSG(memcmp(dst, h + off, n) == 0, "gated async read of %zu bytes at offset %zu",
                      n, off);
            CHECK_MSG(memcmp(dst2, orig, n) == 0,
                      "async write of %zu bytes from pageable memory reused at once", n);
        }
        B->event_release(er), B->event_release(ew), B->event_release(er2);
        B->event_release(u);
        B->buffer_release(b);
        free(h), free(src), free(orig), free(dst), free(dst2);
    }

    /* page-locked destination: the plain async copy, no staging */
    PHASE("gated: async read into page-locked memory");
    size_t n = 3 * 4096 + 11;
    unsigned char *h = malloc(n), *r = malloc(n), *r2 = malloc(n);
    fill_random(h, n);
    void *b = NULL, *pb = NULL, *u = NULL, *er = NULL, *m = NULL;
    CHECK_OK(B->buffer_create(ctx, n, 0, h, &b));
    CHECK_OK(B->buffer_create(ctx, n, KILN_BUFFER_HOST_PINNED, NULL, &pb));
    CHECK_OK(B->user_event_create(ctx, &u));
    if (b && pb && u && CHECK_OK(B->buffer_map(q, pb, KILN_MAP_READ | KILN_MAP_WRITE, 0, n, &m))) {
        memset(m, 0, n);
        CHECK_OK(B->buffer_read(q, b, 0, n, m, 0, 1, &u, &er));
        CHECK(er && still_pending(er));
        CHECK_OK(B->user_event_set(u, 0));
        CHECK_OK(B->event_wait(1, &er));
        CHECK_MSG(memcmp(m, h, n) == 0, "gated async read into page-locked memory");
        CHECK_OK(B->buffer_unmap(q, pb, m, 0, NULL, NULL));
    }
    B->event_release(er), B->event_release(u);
    B->buffer_release(pb);
    er = NULL, u = NULL, pb = NULL;

    /* HOST_PINNED buffers: write, fill, pinned-to-pinned copy, read, all
     * behind one user event (host functions in the stream) */
    PHASE("gated: HOST_PINNED buffer write, fill, copy, read");
    void *p2 = NULL, *ew = NULL;
    unsigned char *src = malloc(n), *exp = malloc(n), pat[8];
    fill_random(src, n);
    fill_random(pat, sizeof pat);
    CHECK_OK(B->buffer_create(ctx, n, KILN_BUFFER_HOST_PINNED, NULL, &pb));
    CHECK_OK(B->buffer_create(ctx, n, KILN_BUFFER_HOST_PINNED, h, &p2));
    CHECK_OK(B->user_event_create(ctx, &u));
    if (pb && p2 && u) {
        memset(r, 0, n);
        CHECK_OK(B->buffer_write(q, pb, 0, n, src, 0, 1, &u, &ew));
        memcpy(exp, src, n); /* the pinned path copies the source too */
        memset(src, 0x11, n);
        CHECK_OK(B->buffer_fill(q, p2, pat, 8, 16, 8 * 100, 0, NULL, NULL));
        CHECK_OK(B->buffer_copy(q, pb, 7, p2, 1000, 500, 0, NULL, NULL));
        CHECK_OK(B->buffer_read(q, p2, 0, n, r, 0, 0, NULL, &er));
        CHECK(ew && still_pending(ew));
        CHECK(er && still_pending(er));
        CHECK_OK(B->user_event_set(u, 0));
        CHECK_OK(B->event_wait(1, &er));
        CHECK_OK(B->event_wait(1, &ew));
        unsigned char *want = malloc(n);
        memcpy(want, h, n);
        for (size_t k = 0; k < 100; k++)
            memcpy(want + 16 + 8 * k, pat, 8);
        memcpy(want + 1000, exp + 7, 500);
        CHECK_MSG(memcmp(r, want, n) == 0, "HOST_PINNED write, fill, copy, read");
        CHECK_OK(B->buffer_read(q, pb, 0, n, r2, 1, 0, NULL, NULL));
        CHECK_MSG(memcmp(r2, exp, n) == 0, "HOST_PINNED async write, read back blocking");
        free(want);
    }
    B->event_release(er), B->event_release(ew), B->event_release(u);
    er = NULL, ew = NULL, u = NULL;

    /* device buffer: a staged 8-byte fill pattern and an unmap, both
     * behind a user event; unmap must not block */
    PHASE("gated: staged fill pattern and unmap behind a user event");
    CHECK_OK(B->user_event_create(ctx, &u));
    m = NULL;
    if (b && u && CHECK_OK(B->buffer_map(q, b, KILN_MAP_WRITE, 10, 100, &m))) {
        void *ef = NULL;
        memset(m, 0x33, 100);
        CHECK_OK(B->buffer_fill(q, b, pat, 8, 200, 8 * 50, 1, &u, &ef));
        CHECK_OK(B->buffer_unmap(q, b, m, 1, &u, &er));
        CHECK(er && still_pending(er));
        CHECK(ef && still_pending(ef));
        CHECK_OK(B->user_event_set(u, 0));
        CHECK_OK(B->event_wait(1, &er));
        CHECK_OK(B->event_wait(1, &ef));
        CHECK_OK(B->buffer_read(q, b, 0, n, r, 1, 0, NULL, NULL));
        int ok = memcmp(r, h, 10) == 0 && memcmp(r + 110, h + 110, 90) == 0 &&
                 memcmp(r + 600, h + 600, n - 600) == 0;
        for (size_t k = 10; k < 110; k++)
            ok &= r[k] == 0x33;
        for (size_t k = 0; k < 50; k++)
            ok &= memcmp(r + 200 + 8 * k, pat, 8) == 0;
        CHECK_MSG(ok, "gated staged fill and unmap");
        B->event_release(ef);
    }
    B->event_release(er), B->event_release(u);
    B->buffer_release(pb), B->buffer_release(p2), B->buffer_release(b);
    free(h), free(r), free(r2), free(src), free(exp);
}

static int test_gpu(void) {
    kiln_status st = B->load();
    if (st != KILN_OK) {
        printf("no CUDA device (%s)\n", kiln_last_error_message());
        return 0;
    }
    signal(SIGALRM, on_alarm);
    PHASE("enumerate");
    kiln__bdevice *devs = NULL;
    size_t count = 0;
    if (!CHECK_OK(B->enumerate(&devs, &count)) || count == 0) {
        printf("no CUDA device (the driver lists none)\n");
        free(devs);
        return 0;
    }
    for (size_t i = 0; i < count; i++) {
        kiln_device_info *in = &devs[i].info;
        printf("%s: %s, %s, sm_%u, %u SMs, %u MHz, %.1f GiB, L2 %llu KiB, driver %s\n"
               "  identity: %s\n",
               in->id, in->name, in->version, in->compute_capability, in->compute_units,
               in->clock_mhz, (double)in->global_mem_bytes / (1 << 30),
               (unsigned long long)in->l2_cache_bytes >> 10, in->driver_version, devs[i].identity);
        char id[32];
        snprintf(id, sizeof id, "cuda:%zu", i);
        CHECK(strcmp(in->id, id) == 0);
        CHECK(in->backend == KILN_BACKEND_CUDA && in->type == KILN_DEVICE_GPU);
        CHECK(in->compute_units > 0 && in->global_mem_bytes > 0 && in->compute_capability >= 30);
        CHECK(in->max_work_group_size >= 256 && in->max_work_item_sizes[0] >= 256);
        CHECK(in->subgroup_size == 32 && in->fp64 == 1);
        CHECK(strcmp(in->backend_name, "cuda") == 0 && in->languages == B->languages);
        CHECK(in->forward_progress == 1 && in->warp_shuffle == 1);
        CHECK(in->device_sleep == (in->compute_capability >= 70));
        CHECK(in->local_mem_bytes >= 16384 && devs[i].extensions && devs[i].identity[0]);
    }
    const kiln__bdevice *dev = &devs[0];
    size_t sub_count = 99;
    kiln__bdevice subs[2];
    CHECK_STATUS(B->partition(dev, 1, subs, 2, &sub_count), KILN_ERROR_UNSUPPORTED);

    void *ctx = NULL, *q = NULL, *bad = NULL;
    if (CHECK_OK(B->context_create(&dev, 1, &ctx))) {
        /* out of order: several streams (test_core_event runs them) */
        if (CHECK_OK(B->queue_create(ctx, dev, KILN_QUEUE_OUT_OF_ORDER, &bad)))
            B->queue_release(bad);
        if (CHECK_OK(B->queue_create(ctx, dev, KILN_QUEUE_PROFILING, &q))) {
            PHASE("buffers");
            test_buffers(ctx, q);
            PHASE("fill");
            test_fill(ctx, q);
            PHASE("kernels");
            test_kernels(ctx, q, dev);
            PHASE("events");
            test_events(ctx, q, dev);
            test_gated_transfers(ctx, q);
            B->queue_release(q);
        }
        B->context_release(ctx);
    }
    /* every device in one context */
    PHASE("multi-device context");
    if (count > 1) {
        const kiln__bdevice **all = malloc(count * sizeof *all);
        for (size_t i = 0; i < count; i++)
            all[i] = &devs[i];
        ctx = NULL;
        if (CHECK_OK(B->context_create(all, count, &ctx))) {
            void *q1 = NULL;
            if (CHECK_OK(B->queue_create(ctx, all[count - 1], 0, &q1))) {
                test_buffers(ctx, q1);
                B->queue_release(q1);
            }
            B->context_release(ctx);
        }
        free(all);
    }
    alarm(0);
    for (size_t i = 0; i < count; i++)
        free(devs[i].extensions);
    free(devs);
    return 1;
}

int main(void) {
    test_table();
    test_pick_block();
    int ran_nvrtc = test_nvrtc();
    int ran_gpu = test_gpu();
    /* exits 1 instead where a check failed */
    if (!ran_nvrtc || !ran_gpu)
        KT_SKIP("%s did not run", !ran_nvrtc && !ran_gpu ? "the NVRTC checks and the GPU part"
                                  : !ran_nvrtc           ? "the NVRTC checks"
                                                         : "the GPU part");
    return kt_report();
}
