/* kiln/cuda.h: native CUDA objects made with the driver API directly
 * (libcuda dlopen'd, like kiln does) are wrapped into kiln objects and
 * kiln's are exposed, in the primary context and in a context made with
 * cuCtxCreate. kiln kernels run on wrapped memory and streams, native
 * commands wait for kiln's CUevents and kiln commands for native ones, and
 * the values are checked against a serial loop. Bad input (NULL, another
 * context's objects, ranges past an allocation, objects of the other
 * backend) gets clear statuses. Exits 77 where there is no CUDA device. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"

#if !KILN_HAVE_CUDA
int main(void) {
    KT_SKIP("kiln was built without cuda.h (no CUDA backend)");
}
#else
#include "kiln/cuda.h"
#include "kiln/opencl.h"

#define XSTR(x) STR(x)
#define STR(x) #x
/* cuda.h maps each name to its versioned symbol (cuMemAlloc_v2): resolve
 * that symbol, with that prototype. */
#define CU_FUNCS(X)              \
    X(cuDeviceGet)               \
    X(cuCtxCreate)               \
    X(cuCtxDestroy)              \
    X(cuCtxSetCurrent)           \
    X(cuDevicePrimaryCtxRetain)  \
    X(cuDevicePrimaryCtxRelease) \
    X(cuStreamCreate)            \
    X(cuStreamDestroy)           \
    X(cuStreamSynchronize)       \
    X(cuStreamWaitEvent)         \
    X(cuEventCreate)             \
    X(cuEventDestroy)            \
    X(cuEventRecord)             \
    X(cuMemAlloc)                \
    X(cuMemFree)                 \
    X(cuMemcpyHtoD)              \
    X(cuMemcpyDtoH)              \
    X(cuMemcpyDtoDAsync)         \
    X(cuMemsetD32Async)          \
    X(cuLaunchHostFunc)          \
    X(cuLaunchKernel)            \
    X(cuMemGetInfo)              \
    X(cuCtxSynchronize)          \
    X(cuMemGetAddressRange)

static struct {
#define FIELD(f) __typeof__(&f) f;
    CU_FUNCS(FIELD)
#undef FIELD
} cu;

static int load_cuda(void) {
    void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
#define RESOLVE(f)                     \
    {                                  \
        void *p = dlsym(lib, XSTR(f)); \
        if (!p)                        \
            return 0;                  \
        memcpy(&cu.f, &p, sizeof p);   \
    }
    CU_FUNCS(RESOLVE)
#undef RESOLVE
    return 1;
}

#define CU_OK(x) CHECK_MSG((x) == CUDA_SUCCESS, "%s", #x)

enum { N = 4096 };

static const char *src = "KILN_KERNEL void axpb(KILN_GLOBAL float *x, float a, float b, int n)\n"
                         "{\n"
                         "    int i = (int)kiln_global_id(0);\n"
                         "    if (i < n) x[i] = a * x[i] + b;\n"
                         "}\n";

static void expect(float *want, const float *init, int rounds) {
    for (int i = 0; i < N; i++) {
        float v = init[i];
        for (int r = 0; r < rounds; r++)
            v = 2.0f * v + 1.0f;
        want[i] = v;
    }
}

/* A host function that holds a stream until the test opens the gate. */
static atomic_int gate_open;
static void CUDA_CB hold_stream(void *unused) {
    (void)unused;
    while (!atomic_load(&gate_open))
        ;
}

static void launch_axpb(kiln_queue *q, kiln_kernel *k, kiln_buffer *b, size_t num_wait,
                        kiln_event *const *wait, kiln_event **ev) {
    size_t global = N;
    kiln_arg args[4] = { KILN_ARG_BUF(b), KILN_ARG_F32(2.0f), KILN_ARG_F32(1.0f), KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &global, NULL, 4, args, num_wait, wait, ev));
}

/* Everything on one native context (primary or user-made) wrapped as kctx. */
static void scenario(CUcontext native_ctx, kiln_context *kctx, kiln_device *dev,
                     const float *init) {
    float *got = calloc(N, sizeof *got), *want = malloc(N * sizeof *want);
    CUcontext back = NULL;
    CHECK_OK(kiln_cuda_context_native(kctx, &back));
    CHECK(back == native_ctx);
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CUstream s = NULL;
    CUdeviceptr m = 0, m2 = 0;
    CU_OK(cu.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
    CU_OK(cu.cuMemAlloc(&m, N * sizeof(float)));
    CU_OK(cu.cuMemAlloc(&m2, N * sizeof(float)));
    CU_OK(cu.cuMemcpyHtoD(m, init, N * sizeof(float)));
    /* from pageable memory the copy's DMA may still be under way, and kiln's
     * streams do not order against the legacy stream (kiln/cuda.h) */
    CU_OK(cu.cuCtxSynchronize());

    kiln_buffer *kb = NULL;
    kiln_queue *kq = NULL, *kq2 = NULL;
    CHECK_OK(kiln_cuda_buffer_wrap(kctx, m, N * sizeof(float), 0, &kb));
    CHECK_OK(kiln_cuda_queue_wrap(kctx, s, 0, &kq));
    CHECK_OK(kiln_queue_create(kctx, dev, 0, &kq2));
    CUdeviceptr mback = 0;
    CUstream sback = NULL;
    CHECK_OK(kiln_cuda_buffer_native(kb, &mback));
    CHECK_OK(kiln_cuda_queue_native(kq, &sback));
    CHECK(mback == m && sback == s);
    CHECK(kiln_buffer_size(kb) == N * sizeof(float));
    kiln_program *prog = NULL;
    kiln_kernel *k = NULL;
    KT_BUILD(kctx, src, NULL, &prog, "axpb", &k);

    /* kiln on the wrapped stream, a native copy behind it in order */
    launch_axpb(kq, k, kb, 0, NULL, NULL);
    CU_OK(cu.cuCtxSetCurrent(native_ctx)); /* kiln leaves its context current */
    CU_OK(cu.cuMemcpyDtoDAsync(m2, m, N * sizeof(float), s));
    CU_OK(cu.cuStreamSynchronize(s));
    CU_OK(cu.cuMemcpyDtoH(got, m2, N * sizeof(float)));
    expect(want, init, 1);
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);

    /* kiln's CUfunction launched natively on s, with kiln's argument list */
    CUfunction f = NULL;
    CHECK_OK(kiln_cuda_kernel_native(k, dev, &f));
    CHECK(f != NULL);
    float a = 2.0f, bb = 1.0f;
    int n = N;
    void *params[4] = { &m, &a, &bb, &n };
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CU_OK(cu.cuLaunchKernel(f, (N + 255) / 256, 1, 1, 256, 1, 1, 0, s, params, NULL));
    CU_OK(cu.cuMemcpyDtoDAsync(m2, m, N * sizeof(float), s));
    CU_OK(cu.cuStreamSynchronize(s));
    CU_OK(cu.cuMemcpyDtoH(got, m2, N * sizeof(float)));
    expect(want, init, 2);
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);

    /* native after kiln: kiln's kernel waits for a kiln user event; a native
     * copy on s waits for that kernel's CUevent */
    kiln_event *gate = NULL, *kk = NULL;
    CHECK_OK(kiln_event_create_user(kctx, &gate));
    CUevent ce = (CUevent)1;
    CHECK_STATUS(kiln_cuda_event_native(gate, &ce), KILN_ERROR_UNSUPPORTED);
    CHECK(ce == NULL);
    launch_axpb(kq2, k, kb, 1, &gate, &kk);
    CHECK_OK(kiln_cuda_event_native(kk, &ce));
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CU_OK(cu.cuStreamWaitEvent(s, ce, 0));
    CU_OK(cu.cuMemcpyDtoDAsync(m2, m, N * sizeof(float), s));
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CU_OK(cu.cuStreamSynchronize(s));
    CU_OK(cu.cuMemcpyDtoH(got, m2, N * sizeof(float)));
    expect(want, init, 3);
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);
    KT_RELEASE(kk, gate);

    /* kiln after native: s is held by a host function, then fills m with
     * 3.0f and records ne; kiln's stream waits for ne before its kernel */
    CUevent ne = NULL;
    CU_OK(cu.cuEventCreate(&ne, CU_EVENT_DISABLE_TIMING));
    atomic_store(&gate_open, 0);
    CU_OK(cu.cuLaunchHostFunc(s, hold_stream, NULL));
    float three = 3.0f;
    unsigned bits;
    memcpy(&bits, &three, sizeof bits);
    CU_OK(cu.cuMemsetD32Async(m, bits, N, s));
    CU_OK(cu.cuEventRecord(ne, s));
    CUstream kiln_stream = NULL;
    CHECK_OK(kiln_cuda_queue_native(kq2, &kiln_stream));
    CU_OK(cu.cuStreamWaitEvent(kiln_stream, ne, 0));
    launch_axpb(kq2, k, kb, 0, NULL, &kk);
    kiln_event_state state = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(kk, &state));
    CHECK_MSG(state != KILN_EVENT_COMPLETE, "kiln ran before the native work it waits for");
    atomic_store(&gate_open, 1);
    CHECK_OK(kiln_event_wait(kk));
    kiln_event_release(kk);
    /* a non-blocking read into pageable memory: staged through kiln's
     * pinned pool, which must not live in this (maybe user) context */
    kiln_event *rd = NULL;
    CHECK_OK(kiln_buffer_read_async(kq2, kb, 0, N * sizeof(float), got, 0, NULL, &rd));
    CHECK_OK(kiln_event_wait(rd));
    kiln_event_release(rd);
    int all7 = 1;
    for (int i = 0; i < N; i++)
        all7 &= got[i] == 7.0f;
    CHECK(all7);

    /* a kiln buffer used natively */
    kiln_buffer *own = NULL;
    CHECK_OK(kiln_buffer_create(kctx, N * sizeof(float), 0, NULL, &own));
    CUdeviceptr op = 0;
    CHECK_OK(kiln_cuda_buffer_native(own, &op));
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CU_OK(cu.cuMemcpyHtoD(op, init, N * sizeof(float)));
    CU_OK(cu.cuCtxSynchronize());
    CHECK_OK(kiln_buffer_read(kq2, own, 0, N * sizeof(float), got));
    CHECK(memcmp(got, init, N * sizeof(float)) == 0);
    kiln_buffer_release(own);

    KT_RELEASE(k, prog, kb, kq, kq2);
    /* borrowed: the memory and the stream are still the caller's */
    CU_OK(cu.cuCtxSetCurrent(native_ctx));
    CU_OK(cu.cuEventDestroy(ne));
    CU_OK(cu.cuMemFree(m));
    CU_OK(cu.cuMemFree(m2));
    CU_OK(cu.cuStreamDestroy(s));
    KT_FREE(got, want);
}

/* NULLs, another context's objects, ranges, flags, the legacy stream. */
static void check_bad_input(kiln_context *kprim, CUcontext user_ctx) {
    kiln_buffer *b = (kiln_buffer *)1;
    kiln_queue *q = (kiln_queue *)1;
    kiln_context *c = (kiln_context *)1;
    CUdeviceptr p = 1;
    CHECK_STATUS(kiln_cuda_buffer_native(NULL, &p), KILN_ERROR_NULL_HANDLE);
    CHECK(p == 0);
    CHECK_STATUS(kiln_cuda_context_native(kprim, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_cuda_context_wrap(NULL, &c), KILN_ERROR_NULL_HANDLE);
    CHECK(c == NULL);
    CHECK_STATUS(kiln_cuda_queue_wrap(NULL, (CUstream)0x10, 0, &q), KILN_ERROR_NULL_HANDLE);
    CHECK(q == NULL);
    CHECK_STATUS(kiln_cuda_queue_wrap(kprim, CU_STREAM_LEGACY, 0, &q), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_cuda_buffer_wrap(kprim, 0, 64, 0, &b), KILN_ERROR_NULL_HANDLE);

    CU_OK(cu.cuCtxSetCurrent(user_ctx));
    CUstream us = NULL;
    CUdeviceptr um = 0;
    CU_OK(cu.cuStreamCreate(&us, CU_STREAM_NON_BLOCKING));
    CU_OK(cu.cuMemAlloc(&um, 256));
    CHECK_STATUS(kiln_cuda_queue_wrap(kprim, us, 0, &q), KILN_ERROR_MISMATCH);
    CHECK(q == NULL);
    CHECK_STATUS(kiln_cuda_buffer_wrap(kprim, um, 256, 0, &b), KILN_ERROR_MISMATCH);
    CHECK(b == NULL);
    kiln_context *kuser = NULL;
    CHECK_OK(kiln_cuda_context_wrap(user_ctx, &kuser));
    CHECK_STATUS(kiln_cuda_buffer_wrap(kuser, um, 257, 0, &b), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_cuda_buffer_wrap(kuser, um + 128, 129, 0, &b), KILN_ERROR_OUT_OF_RANGE);
    CHECK_STATUS(kiln_cuda_buffer_wrap(kuser, um, 0, 0, &b), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_cuda_buffer_wrap(kuser, um, 256, 0x80, &b), KILN_ERROR_INVALID_ARGUMENT);
    CHECK_STATUS(kiln_cuda_queue_wrap(kuser, us, KILN_QUEUE_OUT_OF_ORDER, &q),
                 KILN_ERROR_UNSUPPORTED);
    CHECK_OK(kiln_cuda_buffer_wrap(kuser, um + 128, 128, 0, &b));
    kiln_buffer_release(b);
    CU_OK(cu.cuMemFree(um)); /* still the caller's */
    /* KILN_CUDA_BUFFER_OWN: kiln frees it. The allocation itself is asked
     * about (cuMemGetAddressRange fails once it is freed): the device's
     * free memory, checked before, moves with every other process on the
     * GPU (ctest -j4 on an H100 saw it shrink by 165 MB meanwhile). A free
     * may run a moment later on kiln's worker thread: wait up to 2 s. */
    size_t big = (size_t)256 << 20;
    CUdeviceptr bm = 0;
    CU_OK(cu.cuCtxSetCurrent(user_ctx));
    CU_OK(cu.cuMemAlloc(&bm, big));
    CHECK_OK(kiln_cuda_buffer_wrap(kuser, bm, big, KILN_CUDA_BUFFER_OWN, &b));
    CUdeviceptr base = 0;
    size_t range = 0;
    CU_OK(cu.cuMemGetAddressRange(&base, &range, bm)); /* allocated now */
    kiln_buffer_release(b);
    CU_OK(cu.cuCtxSetCurrent(user_ctx));
    CUresult r = CUDA_SUCCESS;
    for (int waited = 0; waited < 200; waited++) {
        r = cu.cuMemGetAddressRange(&base, &range, bm);
        if (r != CUDA_SUCCESS)
            break;
        usleep(10 * 1000);
    }
    CHECK_MSG(r != CUDA_SUCCESS,
              "an owned buffer of %zu bytes is still allocated "
              "2 s after its release",
              big);
    kiln_context_release(kuser);
    CU_OK(cu.cuCtxSetCurrent(user_ctx));
    CU_OK(cu.cuStreamDestroy(us));
}

/* kiln_opencl_* on CUDA objects and kiln_cuda_* on OpenCL ones. */
static void check_wrong_backend(kiln_context *kprim) {
    cl_context clc = (cl_context)1;
    CHECK_STATUS(kiln_opencl_context_native(kprim, &clc), KILN_ERROR_MISMATCH);
    CHECK(clc == NULL);
    kiln_device *ocl = NULL;
    kiln_status st = kiln_device_select("opencl:0", &ocl);
    if (st == KILN_ERROR_NO_DEVICE || st == KILN_ERROR_NO_RUNTIME) {
        printf("  (no OpenCL device: kiln_cuda_* on OpenCL objects not checked)\n");
        return;
    }
    if (!CHECK_OK(st))
        return;
    kiln_context *oc = NULL;
    kiln_buffer *ob = NULL;
    CHECK_OK(kiln_context_create(&ocl, 1, &oc));
    CHECK_OK(kiln_buffer_create(oc, 64, 0, NULL, &ob));
    CUdeviceptr p = 1;
    CUcontext cc = (CUcontext)1;
    CHECK_STATUS(kiln_cuda_buffer_native(ob, &p), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_cuda_context_native(oc, &cc), KILN_ERROR_MISMATCH);
    CHECK(p == 0 && cc == NULL);
    KT_RELEASE(ob, oc);
}

static const char *put_src = "KILN_KERNEL void put(KILN_GLOBAL int *x, int v, int n) {\n"
                             "    int i = (int)kiln_global_id(0); if (i < n) x[i] = v; }\n";

/* kiln holds a command behind an unset user event on the host (gate.c);
 * once the queue's CUstream is handed out it waits on the device instead
 * (kiln cannot hold back work it does not see): what it held goes to the
 * stream first, in order, and there a command behind a gate that fails
 * still runs while its event reports the failure (kiln/cuda.h). */
static void check_native_gate(kiln_context *ctx, kiln_device *dev) {
    kiln_program *p = NULL;
    kiln_kernel *k = NULL;
    kiln_queue *q = NULL;
    kiln_buffer *b = NULL;
    KT_BUILD(ctx, put_src, NULL, &p, "put", &k);
    CHECK_OK(kiln_queue_create(ctx, dev, 0, &q));
    CHECK_OK(kiln_buffer_create(ctx, N * sizeof(int), 0, NULL, &b));
    int one = 1, *got = calloc(N, sizeof *got);
    CHECK_OK(kiln_buffer_fill(q, b, &one, sizeof one, 0, N * sizeof(int), 0, NULL, NULL));
    CHECK_OK(kiln_queue_finish(q));
    size_t global = N;
    kiln_event *gate = NULL, *e5 = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate));
    kiln_arg a5[3] = { KILN_ARG_BUF(b), KILN_ARG_I32(5), KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &global, NULL, 3, a5, 1, &gate, &e5));
    kiln_event_state st = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(e5, &st));
    CHECK(st == KILN_EVENT_QUEUED); /* held on the host */
    CUstream s = NULL;
    /* refused while it holds a command behind the unset gate: its stream
     * would wait on the device, which deadlocks lazy kernel loading */
    CHECK_STATUS(kiln_cuda_queue_native(q, &s), KILN_ERROR_WRONG_STATE);
    CHECK_OK(kiln_event_get_state(e5, &st));
    CHECK(st == KILN_EVENT_QUEUED);
    CHECK_OK(kiln_event_set_complete(gate, KILN_EVENT_COMPLETE));
    CHECK_OK(kiln_event_wait(e5));
    CHECK_OK(kiln_cuda_queue_native(q, &s)); /* nothing held: the queue goes native */
    kiln_arg a6[3] = { KILN_ARG_BUF(b), KILN_ARG_I32(6), KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &global, NULL, 3, a6, 0, NULL, NULL));
    CHECK_OK(kiln_buffer_read(q, b, 0, N * sizeof(int), got));
    CHECK(got[0] == 6 && got[N - 1] == 6); /* in order: 5, then 6 */
    /* behind a gate that fails, on the native queue: it runs, its event fails */
    kiln_event *gate2 = NULL, *e7 = NULL;
    CHECK_OK(kiln_event_create_user(ctx, &gate2));
    kiln_arg a7[3] = { KILN_ARG_BUF(b), KILN_ARG_I32(7), KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(q, k, 1, &global, NULL, 3, a7, 1, &gate2, &e7));
    CHECK_OK(kiln_event_set_complete(gate2, KILN_EVENT_ERROR));
    CHECK_STATUS(kiln_event_wait(e7), KILN_ERROR_EVENT_FAILED);
    (void)kiln_queue_finish(q); /* reports the failed command */
    CHECK_OK(kiln_buffer_read(q, b, 0, N * sizeof(int), got));
    CHECK(got[0] == 7);
    free(got);
    KT_RELEASE(e5, e7, gate, gate2, b, q, k, p);
}

int main(void) {
    kiln_device *dev = NULL;
    if (kiln_device_select("cuda:0", &dev) != KILN_OK) {
        KT_SKIP("no CUDA device (%s)", kiln_last_error_message());
    }
    if (!load_cuda()) {
        KT_SKIP("libcuda.so.1 lacks an entry point the test uses");
    }
    float *init = malloc(N * sizeof *init);
    for (int i = 0; i < N; i++)
        init[i] = (float)(i % 97) - 40.0f;

    CUdevice cudev = -1;
    CHECK_OK(kiln_cuda_device_native(dev, &cudev));
    kiln_device *found = NULL;
    CHECK_OK(kiln_cuda_device_find(cudev, &found));
    CHECK(found == dev);

    CUcontext prim = NULL, user = NULL;
    CU_OK(cu.cuDevicePrimaryCtxRetain(&prim, cudev));
    kiln_context *kprim = NULL, *kuser = NULL;
    CHECK_OK(kiln_cuda_context_wrap(prim, &kprim));
    printf("  primary context\n");
    scenario(prim, kprim, dev, init);
#if CUDA_VERSION >= 13000
    CU_OK(cu.cuCtxCreate(&user, NULL, 0, cudev));
#else
    CU_OK(cu.cuCtxCreate(&user, 0, cudev));
#endif
    CHECK_OK(kiln_cuda_context_wrap(user, &kuser));
    printf("  context made with cuCtxCreate\n");
    scenario(user, kuser, kiln_context_device(kuser, 0), init);
    check_bad_input(kprim, user);
    check_wrong_backend(kprim);
    check_native_gate(kprim, dev);
    kiln_context_release(kuser);
    CU_OK(cu.cuCtxDestroy(user));

    /* kiln's pooled staging blocks outlive the user's context */
    kiln_queue *q = NULL;
    kiln_buffer *b = NULL;
    CHECK_OK(kiln_queue_create(kprim, dev, 0, &q));
    CHECK_OK(kiln_buffer_create(kprim, N * sizeof(float), 0, init, &b));
    float *got = calloc(N, sizeof *got);
    kiln_event *rd = NULL;
    CHECK_OK(kiln_buffer_read_async(q, b, 0, N * sizeof(float), got, 0, NULL, &rd));
    CHECK_OK(kiln_event_wait(rd));
    CHECK(memcmp(got, init, N * sizeof(float)) == 0);
    KT_RELEASE(rd, b, q, kprim);
    CU_OK(cu.cuDevicePrimaryCtxRelease(cudev));
    KT_FREE(got, init);
    return kt_report();
}
#endif
