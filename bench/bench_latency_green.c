/* The latency test of issue 47 item 2 on CUDA green contexts, through the
 * driver API alone (kiln cannot make green contexts devices yet): the SMs
 * of cuda:0 split once into a reserved partition A and the rest B
 * (cuDeviceGetDevResource, cuDevSmResourceSplitByCount,
 * cuDevResourceGenerateDesc, cuGreenCtxCreate: disjoint by construction),
 * then a small kernel on A, launched and waited for one at a time, while B
 * is idle, runs a compute-bound load, then a memory-bound one. p50/p99 of
 * the host round trip (launch to cuEventSynchronize returning) and of the
 * device time (cuEventElapsedTime). Goal: p99 <= 1.5x idle. bench_fission
 * measures the same on kiln devices (PoCL sub-devices; on CUDA, two
 * queues of the whole device: the unreserved baseline).
 *
 *   bench_latency_green [samples [SMs of A]]   (default 10000, 16)
 *
 * Exits 0 with "UNSUPPORTED: ..." where the driver has no green contexts
 * (before 12.4) or there is no CUDA device. Kernels are compiled at run
 * time by NVRTC (libnvrtc, loaded like libcuda). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_timing.h"

#if KILN_HAVE_CUDA
#include <cuda.h>

static const char *source =
    "extern \"C\" __global__ void small(float *p) { p[threadIdx.x] += 1.0f; }\n"
    "extern \"C\" __global__ void burn(float *p, int iters) {\n"
    "    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; float v = p[i];\n"
    "    for (int k = 0; k < iters; k++) v = v * 0.9999f + 0.25f;\n"
    "    p[i] = v;\n"
    "}\n"
    "extern \"C\" __global__ void stream(const float *a, float *b, size_t n) {\n"
    "    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n;\n"
    "         i += (size_t)gridDim.x * blockDim.x) b[i] = a[i] * 2.0f + b[i];\n"
    "}\n";

/* the driver entry points, by name (cuda.h maps some to _v2) */
#define STR2(x) #x
#define STR(x) STR2(x)
static void *cu_lib;
static void *sym(const char *name) {
    return cu_lib ? dlsym(cu_lib, name) : NULL;
}
#define CU(name, type) ((type)sym(STR(name)))
#define CHECK(call, what)                                                                   \
    do {                                                                                    \
        CUresult r_ = (call);                                                               \
        if (r_ != CUDA_SUCCESS) {                                                           \
            fprintf(stderr, "bench_latency_green: %s failed with CUresult %d\n", what, r_); \
            exit(1);                                                                        \
        }                                                                                   \
    } while (0)

typedef CUresult (*pfn_ctx)(CUcontext);
typedef struct part {
    CUgreenCtx green;
    CUcontext ctx;
    CUstream stream;
    CUmodule module;
    CUfunction small, burn, streamk;
    CUdeviceptr a, b, s;
} part;

static const char *ptx;

static char *nvrtc_ptx(void) {
    static const char *names[] = { "libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12" };
    void *lib = NULL;
    for (size_t i = 0; !lib && i < 3; i++)
        lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return NULL;
    typedef int (*create_t)(void **, const char *, const char *, int, const char *const *,
                            const char *const *);
    typedef int (*compile_t)(void *, int, const char *const *);
    typedef int (*size_t_t)(void *, size_t *);
    typedef int (*get_t)(void *, char *);
    create_t create = (create_t)dlsym(lib, "nvrtcCreateProgram");
    compile_t compile = (compile_t)dlsym(lib, "nvrtcCompileProgram");
    size_t_t ptx_size = (size_t_t)dlsym(lib, "nvrtcGetPTXSize");
    get_t get_ptx = (get_t)dlsym(lib, "nvrtcGetPTX");
    void *prog = NULL;
    size_t n = 0;
    if (!create || !compile || !ptx_size || !get_ptx ||
        create(&prog, source, "latency.cu", 0, NULL, NULL) != 0 || compile(prog, 0, NULL) != 0 ||
        ptx_size(prog, &n) != 0)
        return NULL;
    char *out = malloc(n);
    if (!out || get_ptx(prog, out) != 0)
        return NULL;
    return out;
}

static void part_init(part *p, size_t big) {
    CHECK(CU(cuCtxSetCurrent, pfn_ctx)(p->ctx), "cuCtxSetCurrent");
    CHECK(CU(cuModuleLoadData, CUresult(*)(CUmodule *, const void *))(&p->module, ptx),
          "cuModuleLoadData");
    CUresult (*get)(CUfunction *, CUmodule, const char *) =
        CU(cuModuleGetFunction, CUresult(*)(CUfunction *, CUmodule, const char *));
    CHECK(get(&p->small, p->module, "small"), "cuModuleGetFunction");
    CHECK(get(&p->burn, p->module, "burn"), "cuModuleGetFunction");
    CHECK(get(&p->streamk, p->module, "stream"), "cuModuleGetFunction");
    CUresult (*alloc)(CUdeviceptr *, size_t) = CU(cuMemAlloc, CUresult(*)(CUdeviceptr *, size_t));
    CUresult (*zero)(CUdeviceptr, unsigned char, size_t) =
        CU(cuMemsetD8, CUresult(*)(CUdeviceptr, unsigned char, size_t));
    CHECK(alloc(&p->a, big * 4), "cuMemAlloc");
    CHECK(alloc(&p->b, big * 4), "cuMemAlloc");
    CHECK(alloc(&p->s, 1024), "cuMemAlloc");
    CHECK(zero(p->a, 0, big * 4), "cuMemsetD8");
    CHECK(zero(p->b, 0, big * 4), "cuMemsetD8");
    CHECK(zero(p->s, 0, 1024), "cuMemsetD8");
    CHECK(CU(cuGreenCtxStreamCreate, CUresult(*)(CUstream *, CUgreenCtx, unsigned, int))(
              &p->stream, p->green, CU_STREAM_NON_BLOCKING, 0),
          "cuGreenCtxStreamCreate");
}

typedef CUresult (*launch_t)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                             unsigned, CUstream, void **, void **);

typedef struct load {
    part *p;
    int memory;
    size_t big;
    atomic_int stop;
} load;

static void *load_main(void *arg) {
    load *l = arg;
    launch_t launch = CU(cuLaunchKernel, launch_t);
    CU(cuCtxSetCurrent, pfn_ctx)(l->p->ctx);
    int iters = 4096;
    while (!atomic_load(&l->stop)) {
        for (int r = 0; r < 4; r++) {
            if (l->memory) {
                void *args[] = { &l->p->a, &l->p->b, &l->big };
                launch(l->p->streamk, 4096, 1, 1, 256, 1, 1, 0, l->p->stream, args, NULL);
            } else {
                void *args[] = { &l->p->a, &iters };
                launch(l->p->burn, (unsigned)(l->big / 256 / 16), 1, 1, 256, 1, 1, 0, l->p->stream,
                       args, NULL);
            }
        }
        CU(cuStreamSynchronize, CUresult(*)(CUstream))(l->p->stream);
    }
    return NULL;
}

static double pct(double *v, int n, double p) {
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return v[(int)(p * (n - 1) + 0.5)];
}

static void measure(part *a, int samples, double *rt, double *dev) {
    launch_t launch = CU(cuLaunchKernel, launch_t);
    CUresult (*record)(CUevent, CUstream) = CU(cuEventRecord, CUresult(*)(CUevent, CUstream));
    CUresult (*wait)(CUevent) = CU(cuEventSynchronize, CUresult(*)(CUevent));
    CUresult (*elapsed)(float *, CUevent, CUevent) =
        CU(cuEventElapsedTime, CUresult(*)(float *, CUevent, CUevent));
    CUevent e0, e1;
    CU(cuCtxSetCurrent, pfn_ctx)(a->ctx);
    CUresult (*create)(CUevent *, unsigned) = CU(cuEventCreate, CUresult(*)(CUevent *, unsigned));
    CHECK(create(&e0, CU_EVENT_DEFAULT), "cuEventCreate");
    CHECK(create(&e1, CU_EVENT_DEFAULT), "cuEventCreate");
    for (int s = 0; s < samples; s++) {
        void *args[] = { &a->s };
        double t = bench_now();
        record(e0, a->stream);
        CHECK(launch(a->small, 1, 1, 1, 64, 1, 1, 0, a->stream, args, NULL), "cuLaunchKernel");
        record(e1, a->stream);
        wait(e1);
        rt[s] = (bench_now() - t) * 1e6;
        float ms = 0;
        elapsed(&ms, e0, e1);
        dev[s] = ms * 1e3;
    }
}

int main(int argc, char **argv) {
    int samples = argc > 1 ? atoi(argv[1]) : 10000;
    unsigned want = argc > 2 ? (unsigned)atoi(argv[2]) : 16;
    if (samples < 10)
        return 2;
    cu_lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu_lib || CU(cuInit, CUresult(*)(unsigned))(0) != CUDA_SUCCESS) {
        printf("UNSUPPORTED: no CUDA driver or device\n");
        return 0;
    }
    if (!sym("cuGreenCtxCreate") || !sym("cuDevSmResourceSplitByCount")) {
        printf("UNSUPPORTED: this driver has no green contexts (CUDA 12.4+)\n");
        return 0;
    }
    CUdevice dev;
    CHECK(CU(cuDeviceGet, CUresult(*)(CUdevice *, int))(&dev, 0), "cuDeviceGet");
    CUdevResource sm, groups[1], rest;
    memset(groups, 0, sizeof groups);
    memset(&rest, 0, sizeof rest);
    CHECK(CU(cuDeviceGetDevResource, CUresult(*)(CUdevice, CUdevResource *, CUdevResourceType))(
              dev, &sm, CU_DEV_RESOURCE_TYPE_SM),
          "cuDeviceGetDevResource");
    unsigned ngroups = 1;
    CHECK(CU(cuDevSmResourceSplitByCount,
             CUresult(*)(CUdevResource *, unsigned *, const CUdevResource *, CUdevResource *,
                         unsigned, unsigned))(groups, &ngroups, &sm, &rest, 0, want),
          "cuDevSmResourceSplitByCount");
    part parts[2];
    memset(parts, 0, sizeof parts);
    CUdevResource *res[2] = { &groups[0], &rest };
    for (int i = 0; i < 2; i++) {
        CUdevResourceDesc desc;
        CHECK(CU(cuDevResourceGenerateDesc,
                 CUresult(*)(CUdevResourceDesc *, CUdevResource *, unsigned))(&desc, res[i], 1),
              "cuDevResourceGenerateDesc");
        CHECK(
            CU(cuGreenCtxCreate, CUresult(*)(CUgreenCtx *, CUdevResourceDesc, CUdevice, unsigned))(
                &parts[i].green, desc, dev, CU_GREEN_CTX_DEFAULT_STREAM),
            "cuGreenCtxCreate");
        CHECK(CU(cuCtxFromGreenCtx, CUresult(*)(CUcontext *, CUgreenCtx))(&parts[i].ctx,
                                                                          parts[i].green),
              "cuCtxFromGreenCtx");
    }
    if (!(ptx = nvrtc_ptx())) {
        printf("UNSUPPORTED: NVRTC (libnvrtc.so) not found or the kernels did not compile\n");
        return 0;
    }
    size_t big = (size_t)1 << 26;
    part_init(&parts[0], 256);
    part_init(&parts[1], big);
    printf("cuda:0 green contexts: A %u SMs, B %u SMs (of %u; minimum partition %u); %d "
           "samples of a 64-thread kernel on A\n",
           groups[0].sm.smCount, rest.sm.smCount, sm.sm.smCount, sm.sm.minSmPartitionSize, samples);
    printf("%-22s %10s %10s %10s %10s\n", "partition B", "rt p50 us", "rt p99 us", "dev p50",
           "dev p99");
    double *rt = malloc((size_t)samples * sizeof *rt), *dv = malloc((size_t)samples * sizeof *dv);
    double idle99 = 0;
    for (int mode = 0; mode < 3; mode++) {
        load l = { .p = &parts[1], .memory = mode == 2, .big = big };
        atomic_init(&l.stop, 0);
        pthread_t th;
        if (mode)
            pthread_create(&th, NULL, load_main, &l);
        measure(&parts[0], samples / 10, rt, dv); /* warm */
        measure(&parts[0], samples, rt, dv);
        if (mode) {
            atomic_store(&l.stop, 1);
            pthread_join(th, NULL);
        }
        double r99 = pct(rt, samples, 0.99), r50 = pct(rt, samples, 0.5);
        double d50 = pct(dv, samples, 0.5), d99 = pct(dv, samples, 0.99);
        if (!mode)
            idle99 = r99;
        printf("%-22s %10.1f %10.1f %10.1f %10.1f\n",
               mode == 0   ? "idle"
               : mode == 1 ? "compute-bound load"
                           : "memory-bound load",
               r50, r99, d50, d99);
        if (mode)
            printf("%-22s p99 round trip %.2fx idle (goal <= 1.5x)\n", "", r99 / idle99);
    }
    for (int i = 0; i < 2; i++)
        CU(cuGreenCtxDestroy, CUresult(*)(CUgreenCtx))(parts[i].green);
    free(rt);
    free(dv);
    return 0;
}

#else
int main(void) {
    printf("UNSUPPORTED: built without CUDA's headers\n");
    return 0;
}
#endif
