/* NVTX ranges: every command kiln enqueues is an NVTX range on the calling
 * thread, named by the API call ("kiln_buffer_write", ...) or, for a
 * launch, by the kernel, so Nsight Systems shows kiln's calls above the CUDA (or OpenCL)
 * activity they caused. Built where the header-only NVTX 3 of the CUDA
 * toolkit is found at configure time (KILN_HAVE_NVTX); a profiler attaches
 * by naming its injection library in NVTX_INJECTION64_PATH, as Nsight does.
 * Without that variable kiln never calls into NVTX (one flag test per
 * enqueue), so runs without a profiler do not touch NVTX's lazy setup. */
#include <stdatomic.h>
#include <stdlib.h>

#include "core/internal.h"

#if KILN_HAVE_NVTX
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wcast-function-type"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

/* 0: not looked yet, 1: a tool is named, 2: none */
static atomic_int nvtx_state;

static int nvtx_on(void) {
    int s = atomic_load_explicit(&nvtx_state, memory_order_relaxed);
    if (s == 0) {
        const char *p = getenv("NVTX_INJECTION64_PATH");
        s = p && *p ? 1 : 2;
        atomic_store_explicit(&nvtx_state, s, memory_order_relaxed);
    }
    return s == 1;
}

int kiln__nvtx_push(const char *name) {
    if (!nvtx_on())
        return 0;
    nvtxRangePushA(name ? name : "kiln");
    return 1;
}

void kiln__nvtx_pop(void) {
    nvtxRangePop();
}
#else
int kiln__nvtx_push(const char *name) {
    (void)name;
    return 0;
}

void kiln__nvtx_pop(void) {
}
#endif
