/* The CUDA backend's compile of a generated source, for the tests that put
 * kiln's generated sources through NVRTC (test_offload, test_sort_nvrtc):
 * the CUDA prelude in front of the source, compiled for sm_90. Include
 * after testing/kiln_test_internal.h. */
#ifndef KILN_TEST_NVRTC_PRELUDE_H
#define KILN_TEST_NVRTC_PRELUDE_H

#include <stdlib.h>
#include <string.h>

/* One compile: the prelude and the source (full), NVRTC's output and log.
 * The caller frees full, bin and log. */
typedef struct kt_nvrtc {
    char *full;
    void *bin;
    size_t size;
    int is_ptx;
    char *log;
} kt_nvrtc;

static kiln_status kt_nvrtc_compile(const char *src, kt_nvrtc *o) {
    const char *pre = kiln__embedded_file(kiln__backend_cuda.prelude_file);
    size_t pl = strlen(pre), sl = strlen(src);
    memset(o, 0, sizeof *o);
    o->full = malloc(pl + sl + 1);
    if (!o->full)
        return KILN_ERROR_OUT_OF_HOST_MEMORY;
    memcpy(o->full, pre, pl);
    memcpy(o->full + pl, src, sl + 1);
    return kiln__cuda_compile(o->full, NULL, 90, &o->bin, &o->size, &o->is_ptx, &o->log);
}

#endif
