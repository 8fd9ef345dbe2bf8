/* NVTX ranges around enqueues (src/core/nvtx.c): with a tool named in
 * NVTX_INJECTION64_PATH (tests/nvtx_tool.c, standing in for Nsight
 * Systems), every command kiln enqueues is one range named by its API
 * call (a launch: by its kernel), pushed and popped on the calling thread (never nested). Skipped
 * where kiln was built without NVTX 3 headers. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#ifdef KILN_TEST_NVTX_TOOL
typedef void (*counts_fn)(int *, int *, int *, const char **);

static const char *twice_src = "KILN_KERNEL void twice(KILN_GLOBAL float *x) {\n"
                               "  x[kiln_global_id(0)] *= 2.0f; }\n";

static void run(kiln_queue *q, void *user) {
    (void)user;
    kiln_context *c = kiln_queue_context(q);
    float h[64];
    for (int i = 0; i < 64; i++)
        h[i] = (float)i;
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_buffer_create(c, sizeof h, 0, NULL, &b));
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    KT_BUILD(c, twice_src, NULL, &p, "twice", &k);
    /* NVTX loads its tool at its first call: kiln's first enqueue */
    CHECK_OK(kiln_buffer_write(q, b, 0, sizeof h, h));
    void *tool = dlopen(KILN_TEST_NVTX_TOOL, RTLD_NOW | RTLD_NOLOAD);
    counts_fn counts = tool ? (counts_fn)dlsym(tool, "kiln_nvtx_tool_counts") : NULL;
    CHECK_MSG(counts != NULL, "the tool was not loaded by NVTX: %s", dlerror());
    if (counts) {
        int p0, q0, d0;
        const char *names;
        counts(&p0, &q0, &d0, &names);
        size_t n = 64;
        kiln_arg a[] = { KILN_ARG_BUF(b) };
        CHECK_OK(kiln_buffer_write(q, b, 0, sizeof h, h));
        CHECK_OK(kiln_kernel_launch(q, k, 1, &n, NULL, 1, a, 0, NULL, NULL));
        float got[64];
        CHECK_OK(kiln_buffer_read(q, b, 0, sizeof got, got));
        int ok = 1;
        for (int i = 0; i < 64; i++)
            ok &= got[i] == 2.0f * (float)i;
        CHECK(ok);
        int p1, q1, d1;
        counts(&p1, &q1, &d1, &names);
        /* write, launch, read: one range each (a blocking call may enqueue
         * more than one command) */
        CHECK_MSG(p0 >= 1 && p1 - p0 >= 3, "%d, then %d ranges for 3 commands", p0, p1 - p0);
        CHECK_MSG(p1 == q1, "pushed %d, popped %d", p1, q1);
        CHECK_MSG(d1 == 1, "ranges nested %d deep", d1);
        CHECK_MSG(strstr(names, "twice\n") != NULL, "names:\n%s", names);
        CHECK_MSG(strstr(names, "kiln_buffer_write") != NULL, "names:\n%s", names);
    }
    KT_RELEASE(k, p, b);
}

int main(void) {
    /* before kiln's first enqueue: NVTX looks for its tool once */
    setenv("NVTX_INJECTION64_PATH", KILN_TEST_NVTX_TOOL, 1);
    kt_for_each_device(run, NULL);
    return kt_report();
}
#else
int main(void) {
    printf("kiln was built without NVTX 3 headers: nothing to check\n");
    return 77;
}
#endif
