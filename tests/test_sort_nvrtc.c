/* The CUDA-only onesweep radix sort (kernels/algo_sort_onesweep.cu, with
 * the portable kernels in the same program) compiles with NVRTC for sm_90
 * for every key width and value width (no GPU needed; skipped when NVRTC
 * cannot be loaded). KILN_SORT_VARIANT=onesweep makes the sorts generate
 * it for a CUDA GPU's capabilities on the default device, whose own build
 * of it then fails (it is CUDA C); a hook keeps each source. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testing/kiln_test_internal.h"
#include "harness.h"
#include "nvrtc_prelude.h"

static char *g_src[64];
static size_t g_n, g_compiled;

static void hook(const char *s, unsigned languages) {
    if (languages == (1u << KILN_LANG_CUDA_C) && g_n < 64)
        g_src[g_n++] = strdup(s);
}

/* KT_DUMP_DIR=DIR: each compiled onesweep binary goes to DIR/os-J.cubin
 * (or .ptx) and its source to DIR/os-J.cu, so a refactor of the template
 * can show that NVRTC's output did not change (cmp against a dump from the
 * previous tree), and the SASS can be read offline (cuobjdump -sass). */
static void dump(size_t j, const char *src, const void *bin, size_t size, int is_ptx) {
    const char *dir = getenv("KT_DUMP_DIR");
    char name[64];
    if (!dir)
        return;
    snprintf(name, sizeof name, "os-%zu.%s", j, is_ptx ? "ptx" : "cubin");
    kt_save(dir, name, NULL, bin, size);
    snprintf(name, sizeof name, "os-%zu.cu", j);
    kt_save(dir, name, NULL, src, strlen(src));
}

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *c = kiln_queue_context(q);
    static const kiln_dtype keys[] = { KILN_UINT8, KILN_FLOAT16, KILN_INT32, KILN_FLOAT64 };
    static const kiln_dtype vals[] = { 0, KILN_INT8, KILN_INT32, KILN_INT64 };
    size_t n = 5;
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(kiln_queue_device(q), &info));
    int cuda = info.backend == KILN_BACKEND_CUDA;
    setenv("KILN_SORT_VARIANT", "onesweep", 1);
    kiln__gen_source_hook = hook;
    for (size_t ki = 0; ki < 4; ki++)
        for (size_t vi = 0; vi < 4; vi++) {
            kiln_array *K = NULL, *KO = NULL, *V = NULL, *VO = NULL;
            CHECK_OK(kiln_array_zeros(q, keys[ki], 1, &n, 0, NULL, NULL, &K));
            CHECK_OK(kiln_array_empty(c, keys[ki], 1, &n, &KO));
            if (vals[vi]) {
                CHECK_OK(kiln_array_zeros(q, vals[vi], 1, &n, 0, NULL, NULL, &V));
                CHECK_OK(kiln_array_empty(c, vals[vi], 1, &n, &VO));
            }
            size_t before = g_n;
            /* refused on an OpenCL device (the source is CUDA C); on a
             * CUDA device (scripts/gpu-test.sh) it builds and sorts */
            kiln_status st = kiln_array_sort_out(q, KO, VO, K, V, NULL, 0, NULL, NULL);
            CHECK_MSG(cuda ? st == KILN_OK : st != KILN_OK, "onesweep sort on a %s device: %s",
                      cuda ? "CUDA" : "non-CUDA",
                      st == KILN_OK ? "built" : kiln_last_error_message());
            CHECK_MSG(g_n == before + 1, "%s/%s: no onesweep source", kiln_dtype_name(keys[ki]),
                      vals[vi] ? kiln_dtype_name(vals[vi]) : "-");
            KT_RELEASE(K, KO, V, VO);
        }
    kiln__gen_source_hook = NULL;
    unsetenv("KILN_SORT_VARIANT");
    for (size_t j = 0; j < g_n; j++) {
        /* the launches' argument kinds, as the core checks them */
        kiln__sig_list sl = { 0 };
        CHECK_OK(kiln__sig_parse(g_src[j], &sl));
        const kiln__sig *ph = kiln__sig_find(&sl, "kiln_sort_os_hist");
        const kiln__sig *pp = kiln__sig_find(&sl, "kiln_sort_os_pass");
        static const char kinds_h[] = "BSSSSSSB", kinds_p[] = "BBBBSSSSSSSBSSSSS";
        static const kiln_dtype dt_p[] = { 0,          0,          0,          0,
                                           KILN_INT32, KILN_INT32, KILN_INT64, KILN_INT32,
                                           KILN_INT32, KILN_INT32, KILN_INT32, 0,
                                           KILN_INT32, KILN_INT64, KILN_INT32, KILN_INT32,
                                           KILN_INT32 };
        int ok = ph && pp && ph->num_params == 8 && pp->num_params == 17;
        for (size_t a = 0; ok && a < 8; a++)
            ok = (ph->params[a].kind == KILN_ARG_BUFFER) == (kinds_h[a] == 'B');
        for (size_t a = 0; ok && a < 17; a++)
            ok = (pp->params[a].kind == KILN_ARG_BUFFER) == (kinds_p[a] == 'B') &&
                 (!dt_p[a] || pp->params[a].dtype == dt_p[a]);
        CHECK_MSG(ok, "onesweep source %zu: kernel signatures", j);
        kiln__sig_list_free(&sl);
        kt_nvrtc o;
        kiln_status st = kt_nvrtc_compile(g_src[j], &o);
        CHECK_MSG(st == KILN_OK, "onesweep source %zu: %s", j, kiln_last_error_message());
        if (st != KILN_OK)
            printf("--- log ---\n%s\n", o.log ? o.log : "");
        g_compiled += st == KILN_OK;
        if (st == KILN_OK)
            dump(j, o.full, o.bin, o.size, o.is_ptx);
        KT_FREE(o.bin, o.log, o.full, g_src[j]);
    }
    printf("%zu onesweep sources compiled for sm_90\n", g_compiled);
}

int main(void) {
    if (!kiln__cuda_nvrtc_ready())
        KT_SKIP("NVRTC not found: CUDA compile checks not run");
    kt_for_each_device(run, NULL);
    return kt_report();
}
