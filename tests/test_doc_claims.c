/* What the docs say about writing expressions is what happens (issue 41,
 * item 8): an offload body calls the random and hash functions once
 * kiln_rng_kernel_source() / kiln_hash_kernel_source() are in its
 * preamble (and does not build without them); a pointer declared in a
 * generator expression needs KILN_GLOBAL on OpenCL; kiln_u32x4's members
 * are .x .y .z .w, word 0 being .x. Values against the host's own
 * kiln_rng_philox4x32_10 and a serial xxHash32-free reference (kt_fmix32). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { N = 131 };

static void test_offload_preamble(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    const char *body = "w[i] = kiln_rng_philox4x32_10(kiln_make_u32x4((uint)i, 0u, 0u, 0u),"
                       " kiln_make_u32x2(7u, 9u)).y ^ kiln_hash_fmix32((uint)i);";
    kiln_offload *off = (kiln_offload *)1;
    /* without the preamble the names are unknown: a build error */
    CHECK_STATUS(kiln_offload_create(c, "uint *w", body, 1, NULL, &off), KILN_ERROR_BUILD);
    CHECK(off == NULL);
    size_t la = strlen(kiln_rng_kernel_source()), lb = strlen(kiln_hash_kernel_source());
    char *pre = malloc(la + lb + 2);
    snprintf(pre, la + lb + 2, "%s\n%s", kiln_rng_kernel_source(), kiln_hash_kernel_source());
    if (CHECK_OK(kiln_offload_create(c, "uint *w", body, 1, &KILN_OFFLOAD_OPTS(.preamble = pre),
                                     &off))) {
        uint32_t w[N];
        memset(w, 0, sizeof w);
        size_t range = N;
        kiln_arg args[] = { KILN_FROM(w, sizeof w) };
        if (CHECK_OK(kiln_offload_run(q, off, NULL, &range, 1, args))) {
            int ok = 1;
            for (uint32_t i = 0; i < N; i++) {
                uint32_t ctr[4] = { i, 0, 0, 0 }, key[2] = { 7, 9 }, out[4];
                kiln_rng_philox4x32_10(ctr, key, out);
                ok &= w[i] == (out[1] ^ kt_fmix32(i));
            }
            CHECK_MSG(ok, "offload with the random/hash preamble: wrong words");
        }
        kiln_offload_release(off);
    }
    free(pre);
}

static void test_global_pointer(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    kiln_elementwise *ew = NULL;
    /* with KILN_GLOBAL: builds and runs everywhere */
    if (CHECK_OK(kiln_elementwise_create(
            c,
            &KILN_ELEMENTWISE_DESC(.arguments = "const float *x, float *y",
                                   .operation = "KILN_GLOBAL const float *p = x + i; y[i] = 2 * *p",
                                   .name = "gp"),
            &ew))) {
        size_t n = N;
        float hx[N], hy[N];
        for (int i = 0; i < N; i++)
            hx[i] = (float)i;
        kiln_array *x = NULL, *y = NULL;
        CHECK_OK(kiln_array_from_host(c, KILN_FLOAT32, 1, &n, hx, &x));
        CHECK_OK(kiln_array_empty(c, KILN_FLOAT32, 1, &n, &y));
        kiln_arg a[] = { KILN_ARG_ARRAY(x), KILN_ARG_ARRAY(y) };
        CHECK_OK(kiln_elementwise_launch(q, ew, n, 2, a, 0, NULL, NULL));
        CHECK_OK(kiln_array_read(q, y, hy));
        int ok = 1;
        for (int i = 0; i < N; i++)
            ok &= hy[i] == 2.0f * (float)i;
        CHECK(ok);
        KT_RELEASE(x, y, ew);
    }
    /* without: PoCL refuses (a private pointer to global memory); NVIDIA's
     * OpenCL compiler lets it through, as docs/algorithms.md says */
    kiln_status st = kiln_elementwise_create(
        c,
        &KILN_ELEMENTWISE_DESC(.arguments = "const float *x, float *y",
                               .operation = "const float *p = x + i; y[i] = 2 * *p", .name = "gp2"),
        &ew);
    if (!strcmp(info.backend_name, "opencl") && strstr(info.platform, "Portable Computing"))
        CHECK_STATUS(st, KILN_ERROR_BUILD);
    else if (st == KILN_OK)
        kiln_elementwise_release(ew);
}

static void test_u32x4_members(kiln_queue *q) {
    kiln_context *c = kiln_queue_context(q);
    kiln_elementwise *ew = NULL;
    if (!CHECK_OK(kiln_elementwise_create(
            c,
            &KILN_ELEMENTWISE_DESC(
                    .arguments = "uint *w",
                    .operation =
                        "kiln_u32x4 b = kiln_rng_philox4x32_10(kiln_make_u32x4((uint)(i / 4), 1u, "
                        "2u, 3u), kiln_make_u32x2(5u, 6u)); uint k = (uint)(i % 4); "
                        "w[i] = k == 0 ? b.x : k == 1 ? b.y : k == 2 ? b.z : b.w",
                    .name = "members"),
            &ew)))
        return;
    size_t n = 4 * 9;
    uint32_t hw[36];
    kiln_array *w = NULL;
    CHECK_OK(kiln_array_empty(c, KILN_UINT32, 1, &n, &w));
    kiln_arg a[] = { KILN_ARG_ARRAY(w) };
    CHECK_OK(kiln_elementwise_launch(q, ew, n, 1, a, 0, NULL, NULL));
    CHECK_OK(kiln_array_read(q, w, hw));
    int ok = 1;
    for (uint32_t b = 0; b < 9; b++) {
        uint32_t ctr[4] = { b, 1, 2, 3 }, key[2] = { 5, 6 }, out[4];
        kiln_rng_philox4x32_10(ctr, key, out);
        for (int k = 0; k < 4; k++)
            ok &= hw[4 * b + (uint32_t)k] == out[k];
    }
    CHECK_MSG(ok, "kiln_u32x4 .x .y .z .w are not words 0..3 of the host's block");
    KT_RELEASE(w, ew);
}

int main(void) {
    KT_FOR_EACH_DEVICE_STEPS(test_offload_preamble, test_global_pointer, test_u32x4_members);
    return kt_report();
}
