/* Loading libcuda.so.1 and NVRTC at run time, and error translation. */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "backend/cuda/cuda_internal.h"
#include "base/error.h"

kiln__cu_api kiln__cu;
static int kiln__cu_loaded;
static void *kiln__cu_libcuda;
static void *kiln__cu_libnvrtc;

#define KILN__CU_STR_(x) #x
#define KILN__CU_STR(x) KILN__CU_STR_(x)

/* Resolves kiln__cu.name in the library h, or names it in `missing` (both
 * in the caller's scope); after the first missing symbol the rest are not
 * looked up. */
#define KILN__CU_SYM(name)                                         \
    if (!missing) {                                                \
        *(void **)(&kiln__cu.name) = dlsym(h, KILN__CU_STR(name)); \
        if (!kiln__cu.name)                                        \
            missing = KILN__CU_STR(name);                          \
    }

const kiln__cu_api *kiln__cuda_api(void) {
    return kiln__cu_loaded ? &kiln__cu : NULL;
}

uint64_t kiln__cu_now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

const char *kiln__cu_err_name(CUresult r) {
    const char *s = NULL;
    if (kiln__cu.cuGetErrorName && kiln__cu.cuGetErrorName(r, &s) == CUDA_SUCCESS && s)
        return s;
    return "CUDA_ERROR_UNKNOWN_CODE";
}

kiln_status kiln__cu_status_of(CUresult r) {
    switch (r) {
    case CUDA_SUCCESS:
        return KILN_OK;
    case CUDA_ERROR_OUT_OF_MEMORY:
        return KILN_ERROR_OUT_OF_DEVICE_MEMORY;
    case CUDA_ERROR_INVALID_VALUE:
    case CUDA_ERROR_INVALID_HANDLE:
        return KILN_ERROR_INVALID_ARGUMENT;
    case CUDA_ERROR_NO_DEVICE:
        return KILN_ERROR_NO_DEVICE;
    case CUDA_ERROR_NOT_SUPPORTED:
        return KILN_ERROR_UNSUPPORTED;
    case CUDA_ERROR_NOT_FOUND:
        return KILN_ERROR_KERNEL_NOT_FOUND;
    case CUDA_ERROR_INVALID_IMAGE:
    case CUDA_ERROR_INVALID_PTX:
    case CUDA_ERROR_NO_BINARY_FOR_GPU:
    case CUDA_ERROR_UNSUPPORTED_PTX_VERSION:
        return KILN_ERROR_BUILD;
    case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
        return KILN_ERROR_OUT_OF_RANGE;
    default:
        return KILN_ERROR_DRIVER;
    }
}

kiln_status kiln__cu_fail(const char *call, CUresult r) {
    const char *msg = NULL;
    if (!kiln__cu.cuGetErrorString || kiln__cu.cuGetErrorString(r, &msg) != CUDA_SUCCESS)
        msg = NULL;
    return kiln__error_set(kiln__cu_status_of(r), (long)r, "%s: %s (%d)%s%s", call,
                           kiln__cu_err_name(r), (int)r, msg ? ": " : "", msg ? msg : "");
}

kiln_status kiln__cu_ctx_use(CUcontext c) {
    CUcontext cur = NULL;
    if (kiln__cu.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur == c)
        return KILN_OK;
    CUresult r = kiln__cu.cuCtxSetCurrent(c);
    return r == CUDA_SUCCESS ? KILN_OK : kiln__cu_fail("cuCtxSetCurrent", r);
}

/* NVRTC: the unversioned name first (a distribution's symlink), then the
 * toolkit's sonames, then the toolkit's own directories. */
static void kiln__cu_load_nvrtc(void) {
    char paths[12][256];
    size_t n = 0;
    const char *names[] = { "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12" };
    for (size_t i = 0; i < 3; i++)
        snprintf(paths[n++], sizeof paths[0], "%s", names[i]);
    const char *home = getenv("CUDA_HOME");
    const char *dirs[] = { home, getenv("CUDA_PATH"), "/usr/local/cuda" };
    for (size_t d = 0; d < 3; d++) {
        if (!dirs[d] || !dirs[d][0])
            continue;
        for (size_t i = 0; i < 3 && n < 12; i++)
            snprintf(paths[n++], sizeof paths[0], "%s/lib64/%s", dirs[d], names[i]);
    }
    void *h = NULL;
    for (size_t i = 0; i < n && !h; i++) {
        h = dlopen(paths[i], RTLD_NOW | RTLD_LOCAL);
        if (h)
            snprintf(kiln__cu.nvrtc_path, sizeof kiln__cu.nvrtc_path, "%s", paths[i]);
    }
    if (!h) {
        snprintf(kiln__cu.nvrtc_error, sizeof kiln__cu.nvrtc_error,
                 "NVRTC (libnvrtc.so) not found: CUDA programs cannot be "
                 "built; install the CUDA toolkit's NVRTC (package "
                 "cuda-nvrtc-13-0 or libnvrtc) or set CUDA_HOME");
        return;
    }
    const char *missing = NULL;
    KILN__CU_NVRTC_FUNCS(KILN__CU_SYM)
    if (missing) {
        snprintf(kiln__cu.nvrtc_error, sizeof kiln__cu.nvrtc_error,
                 "%s lacks %s: NVRTC too old; install the CUDA 12 or 13 "
                 "toolkit's NVRTC",
                 kiln__cu.nvrtc_path, missing);
        dlclose(h);
        return;
    }
    if (kiln__cu.nvrtcVersion(&kiln__cu.nvrtc_major, &kiln__cu.nvrtc_minor) != NVRTC_SUCCESS)
        kiln__cu.nvrtc_major = kiln__cu.nvrtc_minor = 0;
    kiln__cu_libnvrtc = h;
    kiln__cu.have_nvrtc = 1;
}

/* Only NVRTC (for compiling without a GPU: tests and tools). */
static pthread_once_t kiln__cu_nvrtc_once = PTHREAD_ONCE_INIT;
static void kiln__cu_nvrtc_once_fn(void) {
    if (!kiln__cu.have_nvrtc)
        kiln__cu_load_nvrtc();
}
int kiln__cuda_nvrtc_ready(void) {
    pthread_once(&kiln__cu_nvrtc_once, kiln__cu_nvrtc_once_fn);
    return kiln__cu.have_nvrtc;
}

static void kiln__cu_clear_driver(void) {
#define KILN__CU_DRV_CLEAR(name) kiln__cu.name = NULL;
    KILN__CU_DRIVER_FUNCS(KILN__CU_DRV_CLEAR)
#undef KILN__CU_DRV_CLEAR
    kiln__cu.elapsed = NULL;
}

kiln_status kiln__cu_load(void) {
    if (kiln__cu_loaded)
        return KILN_OK;
    void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!h)
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                               "libcuda.so.1 not found: no NVIDIA driver "
                               "(install the NVIDIA driver to use CUDA "
                               "devices)");
    const char *missing = NULL;
    /* The symbol names come from cuda.h's macros: cuMemAlloc expands to
     * cuMemAlloc_v2 before it is turned into a string. */
    KILN__CU_DRIVER_FUNCS(KILN__CU_SYM)
    if (!missing) {
        *(void **)(&kiln__cu.elapsed) = dlsym(h, KILN__CU_STR(cuEventElapsedTime));
        if (!kiln__cu.elapsed)
            *(void **)(&kiln__cu.elapsed) = dlsym(h, "cuEventElapsedTime");
        if (!kiln__cu.elapsed)
            missing = "cuEventElapsedTime";
    }
    if (missing) {
        dlclose(h);
        kiln__cu_clear_driver();
        return kiln__error_set(KILN_ERROR_NO_RUNTIME, 0,
                               "libcuda.so.1 lacks %s: the NVIDIA driver is "
                               "too old for this build (CUDA %d headers); "
                               "update the driver",
                               missing, CUDA_VERSION);
    }
    CUresult r = kiln__cu.cuInit(0);
    if (r != CUDA_SUCCESS) {
        kiln_status st = kiln__cu_fail("cuInit", r);
        dlclose(h);
        kiln__cu_clear_driver();
        return kiln__error_prefix(st == KILN_ERROR_NO_DEVICE ? st : KILN_ERROR_NO_RUNTIME,
                                  "the NVIDIA driver did not initialise");
    }
    if (kiln__cu.cuDriverGetVersion(&kiln__cu.driver_version) != CUDA_SUCCESS)
        kiln__cu.driver_version = 0;
    kiln__cu_libcuda = h;
    kiln__cuda_nvrtc_ready();
    kiln__cu_loaded = 1;
    return KILN_OK;
}

void *kiln__cu_symbol(const char *name) {
    return kiln__cu_libcuda ? dlsym(kiln__cu_libcuda, name) : NULL;
}

kiln_status kiln__cuda_load(void) {
    return kiln__cu_load();
}
