/* A minimal NVTX tool for test_nvtx: NVTX 3 loads it from
 * NVTX_INJECTION64_PATH and calls InitializeInjectionNvtx2, which puts its
 * own RangePushA/RangePop into NVTX's core function table, as a profiler
 * such as Nsight Systems does. It counts the ranges and remembers names. */
#include <stdatomic.h>
#include <string.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wcast-function-type"
#include <nvtx3/nvToolsExt.h>
#pragma GCC diagnostic pop

static atomic_int pushes, pops, depth_max, depth;
static char seen[4096]; /* names, one per line, first use only */
static atomic_flag seen_lock = ATOMIC_FLAG_INIT;

static int push_a(const char *name) {
    int d = atomic_fetch_add(&depth, 1) + 1;
    int m = atomic_load(&depth_max);
    while (d > m && !atomic_compare_exchange_weak(&depth_max, &m, d))
        ;
    atomic_fetch_add(&pushes, 1);
    while (atomic_flag_test_and_set(&seen_lock))
        ;
    size_t n = strlen(name ? name : "");
    if (name && !strstr(seen, name) && strlen(seen) + n + 2 < sizeof seen) {
        strcat(seen, name);
        strcat(seen, "\n");
    }
    atomic_flag_clear(&seen_lock);
    return d - 1;
}

static int pop(void) {
    atomic_fetch_add(&pops, 1);
    return atomic_fetch_sub(&depth, 1) - 1;
}

__attribute__((visibility("default"))) int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
    const NvtxExportTableCallbacks *cb = (const NvtxExportTableCallbacks *)get(NVTX_ETID_CALLBACKS);
    NvtxFunctionTable table = NULL;
    unsigned size = 0;
    if (!cb || !cb->GetModuleFunctionTable(NVTX_CB_MODULE_CORE, &table, &size) ||
        size <= NVTX_CBID_CORE_RangePop)
        return 0;
    *table[NVTX_CBID_CORE_RangePushA] = (NvtxFunctionPointer)(void (*)(void))push_a;
    *table[NVTX_CBID_CORE_RangePop] = (NvtxFunctionPointer)(void (*)(void))pop;
    return 1;
}

/* What test_nvtx reads back (through dlsym). */
__attribute__((visibility("default"))) void kiln_nvtx_tool_counts(int *p, int *q, int *deepest,
                                                                  const char **names) {
    *p = atomic_load(&pushes);
    *q = atomic_load(&pops);
    *deepest = atomic_load(&depth_max);
    *names = seen;
}
