/* kiln/opencl.h: native OpenCL objects made with the ICD loader directly
 * (dlopen'd, like kiln does) are wrapped into kiln objects and kiln's are
 * exposed; kiln kernels run on wrapped buffers and queues, native commands
 * wait for kiln events and kiln commands for native events, and the values
 * are checked against a serial loop. Bad input (NULL, a foreign cl_context,
 * a cl_device_id kiln does not know, objects of the other backend) gets
 * clear statuses. Runs on every OpenCL test device; exits 77 if none. */
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS /* clCreateCommandQueue: PoCL and NVIDIA both have it */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "kiln/opencl.h"
#if KILN_HAVE_CUDA
#include "kiln/cuda.h"
#endif

#define CL_FUNCS(X)          \
    X(clGetDeviceInfo)       \
    X(clCreateContext)       \
    X(clReleaseContext)      \
    X(clGetContextInfo)      \
    X(clCreateCommandQueue)  \
    X(clReleaseCommandQueue) \
    X(clCreateBuffer)        \
    X(clReleaseMemObject)    \
    X(clGetMemObjectInfo)    \
    X(clEnqueueReadBuffer)   \
    X(clEnqueueWriteBuffer)  \
    X(clEnqueueCopyBuffer)   \
    X(clCreateUserEvent)     \
    X(clSetUserEventStatus)  \
    X(clReleaseEvent)        \
    X(clWaitForEvents)       \
    X(clGetEventInfo)        \
    X(clFinish)              \
    X(clCreateSubDevices)    \
    X(clReleaseDevice)

static struct {
#define FIELD(f) __typeof__(&f) f;
    CL_FUNCS(FIELD)
#undef FIELD
} cl;

static int load_opencl(void) {
    void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!lib)
        return 0;
#define RESOLVE(f)                   \
    {                                \
        void *p = dlsym(lib, #f);    \
        if (!p)                      \
            return 0;                \
        memcpy(&cl.f, &p, sizeof p); \
    }
    CL_FUNCS(RESOLVE)
#undef RESOLVE
    return 1;
}

enum { N = 1000 };

static const char *src = "KILN_KERNEL void axpb(KILN_GLOBAL float *x, float a, float b, int n)\n"
                         "{\n"
                         "    int i = (int)kiln_global_id(0);\n"
                         "    if (i < n) x[i] = a * x[i] + b;\n"
                         "}\n";

static cl_uint refcount_ctx(cl_context c) {
    cl_uint n = 0;
    cl.clGetContextInfo(c, CL_CONTEXT_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

static cl_uint refcount_mem(cl_mem m) {
    cl_uint n = 0;
    cl.clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof n, &n, NULL);
    return n;
}

/* Exposure of a device, round trips. */
static void check_device(kiln_device *dev, cl_device_id *id_out, cl_platform_id *plat_out) {
    cl_device_id id = NULL;
    cl_platform_id plat = NULL, plat2 = NULL;
    CHECK_OK(kiln_opencl_device_native(dev, &id));
    CHECK_OK(kiln_opencl_device_platform(dev, &plat));
    CHECK(id != NULL && plat != NULL);
    CHECK(cl.clGetDeviceInfo(id, CL_DEVICE_PLATFORM, sizeof plat2, &plat2, NULL) == CL_SUCCESS);
    CHECK(plat2 == plat);
    kiln_device *found = NULL;
    CHECK_OK(kiln_opencl_device_find(id, &found));
    CHECK(found == dev);
    *id_out = id;
    *plat_out = plat;
}

/* a*x+b, n times over, as the device computes it in float. */
static void expect(float *want, const float *init, int rounds) {
    for (int i = 0; i < N; i++) {
        float v = init[i];
        for (int r = 0; r < rounds; r++)
            v = 2.0f * v + 1.0f;
        want[i] = v;
    }
}

typedef struct native {
    cl_context ctx;
    cl_command_queue q, qprof;
    cl_mem mem;
} native;

/* kiln after native (a wrapped native event in a wait list) and native
 * after kiln (kiln's cl_event in a native wait list), on a wrapped buffer,
 * with a native user event holding everything back until all is queued. */
static void check_ordering(native *nt, kiln_context *kctx, kiln_device *dev, kiln_kernel *k,
                           kiln_buffer *kbuf, const float *init) {
    cl_int err = 0;
    cl_event gate = cl.clCreateUserEvent(nt->ctx, &err);
    CHECK(err == CL_SUCCESS);
    cl_event nwrite = NULL, nread = NULL;
    CHECK(cl.clEnqueueWriteBuffer(nt->q, nt->mem, CL_FALSE, 0, N * sizeof(float), init, 1, &gate,
                                  &nwrite) == CL_SUCCESS);
    kiln_event *kw = NULL, *kk = NULL;
    CHECK_OK(kiln_opencl_event_wrap(kctx, nwrite, &kw));
    cl.clReleaseEvent(nwrite); /* kiln holds its own reference */
    kiln_queue *kq2 = NULL;    /* kiln's own queue: only the events order it */
    CHECK_OK(kiln_queue_create(kctx, dev, 0, &kq2));
    size_t global = N;
    kiln_arg args[4] = { KILN_ARG_BUF(kbuf), KILN_ARG_F32(2.0f), KILN_ARG_F32(1.0f),
                         KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(kq2, k, 1, &global, NULL, 4, args, 1, &kw, &kk));
    kiln_event_state state = KILN_EVENT_COMPLETE;
    CHECK_OK(kiln_event_get_state(kk, &state));
    CHECK_MSG(state != KILN_EVENT_COMPLETE, "kiln ran before the native write it waits for");
    cl_event kcl = NULL;
    CHECK_OK(kiln_opencl_event_native(kk, &kcl));
    cl_context owner = NULL;
    CHECK(cl.clGetEventInfo(kcl, CL_EVENT_CONTEXT, sizeof owner, &owner, NULL) == CL_SUCCESS);
    CHECK(owner == nt->ctx);
    float *got = calloc(N, sizeof *got), *want = malloc(N * sizeof *want);
    CHECK(cl.clEnqueueReadBuffer(nt->qprof, nt->mem, CL_FALSE, 0, N * sizeof(float), got, 1, &kcl,
                                 &nread) == CL_SUCCESS);
    CHECK(cl.clSetUserEventStatus(gate, CL_COMPLETE) == CL_SUCCESS);
    CHECK(cl.clWaitForEvents(1, &nread) == CL_SUCCESS);
    expect(want, init, 1);
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);
    CHECK_OK(kiln_event_wait(kw));
    KT_RELEASE(kw, kk, kq2);
    cl.clReleaseEvent(nread);
    cl.clReleaseEvent(gate);
    KT_FREE(got, want);
}

/* Both ways on one in-order queue: kiln work on the wrapped native queue,
 * a native copy into a kiln buffer on kiln's exposed queue. */
static void check_queues(native *nt, kiln_context *kctx, kiln_kernel *k, kiln_buffer *kbuf,
                         const float *init) {
    kiln_queue *kq = NULL;
    CHECK_OK(kiln_opencl_queue_wrap(kctx, nt->q, &kq));
    cl_command_queue back = NULL;
    CHECK_OK(kiln_opencl_queue_native(kq, &back));
    CHECK(back == nt->q);
    CHECK(kiln_queue_context(kq) == kctx);
    CHECK(kiln_queue_get_flags(kq) == 0);
    size_t global = N;
    kiln_arg args[4] = { KILN_ARG_BUF(kbuf), KILN_ARG_F32(2.0f), KILN_ARG_F32(1.0f),
                         KILN_ARG_I32(N) };
    CHECK_OK(kiln_kernel_launch(kq, k, 1, &global, NULL, 4, args, 0, NULL, NULL));
    float *got = calloc(N, sizeof *got), *want = malloc(N * sizeof *want);
    /* native read right behind kiln's kernel, in the same queue */
    CHECK(cl.clEnqueueReadBuffer(nt->q, nt->mem, CL_TRUE, 0, N * sizeof(float), got, 0, NULL,
                                 NULL) == CL_SUCCESS);
    expect(want, init, 2);
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);

    /* kiln's own buffer and queue, used natively */
    kiln_buffer *own = NULL;
    CHECK_OK(kiln_buffer_create(kctx, N * sizeof(float), 0, NULL, &own));
    cl_mem own_mem = NULL;
    cl_command_queue own_q = NULL;
    CHECK_OK(kiln_opencl_buffer_native(own, &own_mem));
    CHECK_OK(kiln_opencl_queue_native(kq, &own_q));
    CHECK(cl.clEnqueueCopyBuffer(own_q, nt->mem, own_mem, 0, 0, N * sizeof(float), 0, NULL, NULL) ==
          CL_SUCCESS);
    memset(got, 0, N * sizeof(float));
    CHECK_OK(kiln_buffer_read(kq, own, 0, N * sizeof(float), got));
    CHECK(memcmp(got, want, N * sizeof(float)) == 0);
    kiln_buffer_release(own);

    /* a profiling native queue gives a profiling kiln queue and events */
    kiln_queue *kp = NULL;
    CHECK_OK(kiln_opencl_queue_wrap(kctx, nt->qprof, &kp));
    CHECK(kiln_queue_get_flags(kp) == KILN_QUEUE_PROFILING);
    cl_event nev = NULL;
    CHECK(cl.clEnqueueReadBuffer(nt->qprof, nt->mem, CL_FALSE, 0, 64, got, 0, NULL, &nev) ==
          CL_SUCCESS);
    kiln_event *kev = NULL;
    CHECK_OK(kiln_opencl_event_wrap(kctx, nev, &kev));
    CHECK_OK(kiln_event_wait(kev));
    kiln_event_times t;
    CHECK_OK(kiln_event_get_times(kev, &t));
    CHECK(t.ended >= t.started);
    /* a wrapped event is not a kiln user event */
    CHECK_STATUS(kiln_event_set_complete(kev, KILN_EVENT_COMPLETE), KILN_ERROR_WRONG_STATE);
    kiln_event_release(kev);
    cl.clReleaseEvent(nev);
    KT_RELEASE(kp, kq);
    KT_FREE(got, want);
}

/* NULLs, objects of another cl_context, devices kiln does not know. */
static void check_bad_input(native *nt, kiln_context *kctx, cl_device_id id, cl_platform_id plat,
                            kiln_buffer *kbuf) {
    cl_mem m = (cl_mem)1;
    kiln_buffer *b = (kiln_buffer *)1;
    kiln_context *c = (kiln_context *)1;
    kiln_queue *q = (kiln_queue *)1;
    kiln_event *e = (kiln_event *)1;
    kiln_device *d = (kiln_device *)1;
    CHECK_STATUS(kiln_opencl_buffer_native(NULL, &m), KILN_ERROR_NULL_HANDLE);
    CHECK(m == NULL);
    CHECK_STATUS(kiln_opencl_buffer_native(kbuf, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_opencl_device_native(NULL, &(cl_device_id){ 0 }), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_opencl_device_find(NULL, &d), KILN_ERROR_NULL_HANDLE);
    CHECK(d == NULL);
    CHECK_STATUS(kiln_opencl_context_wrap(NULL, &c), KILN_ERROR_NULL_HANDLE);
    CHECK(c == NULL);
    CHECK_STATUS(kiln_opencl_context_wrap(nt->ctx, NULL), KILN_ERROR_NULL_HANDLE);
    CHECK_STATUS(kiln_opencl_queue_wrap(NULL, nt->q, &q), KILN_ERROR_NULL_HANDLE);
    CHECK(q == NULL);
    CHECK_STATUS(kiln_opencl_buffer_wrap(kctx, NULL, &b), KILN_ERROR_NULL_HANDLE);
    CHECK(b == NULL);
    CHECK_STATUS(kiln_opencl_event_wrap(kctx, NULL, &e), KILN_ERROR_NULL_HANDLE);
    CHECK(e == NULL);

    /* objects of another cl_context */
    cl_int err = 0;
    cl_context_properties props[3] = { CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0 };
    cl_context other = cl.clCreateContext(props, 1, &id, NULL, NULL, &err);
    CHECK(other && err == CL_SUCCESS);
    cl_command_queue oq = cl.clCreateCommandQueue(other, id, 0, &err);
    cl_mem om = cl.clCreateBuffer(other, CL_MEM_READ_WRITE, 64, NULL, &err);
    cl_event oe = cl.clCreateUserEvent(other, &err);
    b = (kiln_buffer *)1;
    CHECK_STATUS(kiln_opencl_buffer_wrap(kctx, om, &b), KILN_ERROR_MISMATCH);
    CHECK(b == NULL);
    CHECK_STATUS(kiln_opencl_queue_wrap(kctx, oq, &q), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_opencl_event_wrap(kctx, oe, &e), KILN_ERROR_MISMATCH);
    CHECK(strstr(kiln_last_error_message(), "another cl_context") != NULL);
    cl.clSetUserEventStatus(oe, CL_COMPLETE);
    cl.clReleaseEvent(oe);
    cl.clReleaseMemObject(om);
    cl.clReleaseCommandQueue(oq);
    cl.clReleaseContext(other);

    /* a device kiln does not know: a sub-device made natively */
    cl_device_partition_property part[3] = { CL_DEVICE_PARTITION_EQUALLY, 1, 0 };
    cl_device_id sub[64];
    cl_uint nsub = 0, max_sub = 0;
    CHECK(cl.clGetDeviceInfo(id, CL_DEVICE_PARTITION_MAX_SUB_DEVICES, sizeof max_sub, &max_sub,
                             NULL) == CL_SUCCESS);
    cl_int perr = cl.clCreateSubDevices(id, part, 64, sub, &nsub);
    if (max_sub < 2) { /* the driver says it cannot partition this device */
        CHECK(perr != CL_SUCCESS || nsub <= 1);
        printf("  (device cannot be partitioned: foreign-device checks not run)\n");
        for (cl_uint i = 0; perr == CL_SUCCESS && i < nsub; i++)
            cl.clReleaseDevice(sub[i]);
        return;
    }
    CHECK_MSG(perr == CL_SUCCESS && nsub > 0, "clCreateSubDevices: %d", (int)perr);
    if (perr != CL_SUCCESS || nsub == 0)
        return;
    CHECK_STATUS(kiln_opencl_device_find(sub[0], &d), KILN_ERROR_NO_DEVICE);
    cl_context subctx = cl.clCreateContext(props, 1, &sub[0], NULL, NULL, &err);
    CHECK(subctx && err == CL_SUCCESS);
    /* PoCL 3 reports the parent device as such a context's device */
    cl_device_id listed = NULL;
    CHECK(cl.clGetContextInfo(subctx, CL_CONTEXT_DEVICES, sizeof listed, &listed, NULL) ==
          CL_SUCCESS);
    if (listed == sub[0]) {
        c = (kiln_context *)1;
        CHECK_STATUS(kiln_opencl_context_wrap(subctx, &c), KILN_ERROR_NO_DEVICE);
        CHECK(c == NULL);
        CHECK(strstr(kiln_last_error_message(), "not one of kiln's devices") != NULL);
    } else {
        printf("  (the driver lists the parent device in a sub-device's context: "
               "foreign-context check not run)\n");
    }
    cl.clReleaseContext(subctx);
    for (cl_uint i = 0; i < nsub; i++)
        cl.clReleaseDevice(sub[i]);
}

#if KILN_HAVE_CUDA
/* kiln_cuda_* on OpenCL objects: the other backend's interop refuses. */
static void check_wrong_backend(kiln_context *kctx, kiln_queue *q, kiln_buffer *kbuf,
                                kiln_kernel *k, kiln_device *dev) {
    CUdeviceptr p = 1;
    CUstream s = (CUstream)1;
    CUcontext c = (CUcontext)1;
    CUdevice d = 1;
    kiln_event *ev = NULL;
    CHECK_OK(kiln_queue_marker(q, 0, NULL, &ev));
    CUevent ce = (CUevent)1;
    CHECK_STATUS(kiln_cuda_buffer_native(kbuf, &p), KILN_ERROR_MISMATCH);
    CHECK(p == 0);
    CHECK(strstr(kiln_last_error_message(), "opencl") != NULL);
    CHECK_STATUS(kiln_cuda_queue_native(q, &s), KILN_ERROR_MISMATCH);
    CHECK(s == NULL);
    CHECK_STATUS(kiln_cuda_context_native(kctx, &c), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_cuda_event_native(ev, &ce), KILN_ERROR_MISMATCH);
    CHECK_STATUS(kiln_cuda_device_native(dev, &d), KILN_ERROR_MISMATCH);
    CUfunction f = (CUfunction)1;
    CHECK_STATUS(kiln_cuda_kernel_native(k, dev, &f), KILN_ERROR_MISMATCH);
    CHECK(f == NULL);
    kiln_buffer *b = NULL;
    CHECK_STATUS(kiln_cuda_buffer_wrap(kctx, 0x1000, 64, 0, &b), KILN_ERROR_MISMATCH);
    CHECK(b == NULL);
    kiln_event_release(ev);
}
#endif

static int opencl_devices_run;

static void run(kiln_queue *queue, void *user) {
    const float *init = user;
    kiln_device *dev = kiln_queue_device(queue);
    kiln_device_info info;
    CHECK_OK(kiln_device_get_info(dev, &info));
    if (info.backend != KILN_BACKEND_OPENCL) {
        printf("  (not an OpenCL device: not run here)\n");
        return;
    }
    opencl_devices_run++;
    cl_device_id id = NULL;
    cl_platform_id plat = NULL;
    check_device(dev, &id, &plat);

    native nt;
    cl_int err = 0;
    cl_context_properties props[3] = { CL_CONTEXT_PLATFORM, (cl_context_properties)plat, 0 };
    nt.ctx = cl.clCreateContext(props, 1, &id, NULL, NULL, &err);
    CHECK(nt.ctx && err == CL_SUCCESS);
    nt.q = cl.clCreateCommandQueue(nt.ctx, id, 0, &err);
    nt.qprof = cl.clCreateCommandQueue(nt.ctx, id, CL_QUEUE_PROFILING_ENABLE, &err);
    nt.mem = cl.clCreateBuffer(nt.ctx, CL_MEM_READ_WRITE, N * sizeof(float), NULL, &err);
    CHECK(nt.q && nt.qprof && nt.mem);
    cl_uint ctx_refs = refcount_ctx(nt.ctx);

    kiln_context *kctx = NULL;
    CHECK_OK(kiln_opencl_context_wrap(nt.ctx, &kctx));
    CHECK(refcount_ctx(nt.ctx) == ctx_refs + 1);
    cl_context back = NULL;
    CHECK_OK(kiln_opencl_context_native(kctx, &back));
    CHECK(back == nt.ctx);
    CHECK(kiln_context_num_devices(kctx) == 1 && kiln_context_device(kctx, 0) == dev);

    cl_uint mem_refs = refcount_mem(nt.mem);
    kiln_buffer *kbuf = NULL;
    CHECK_OK(kiln_opencl_buffer_wrap(kctx, nt.mem, &kbuf));
    CHECK(refcount_mem(nt.mem) == mem_refs + 1);
    CHECK(kiln_buffer_size(kbuf) == N * sizeof(float));
    cl_mem mback = NULL;
    CHECK_OK(kiln_opencl_buffer_native(kbuf, &mback));
    CHECK(mback == nt.mem);

    kiln_program *prog = NULL;
    kiln_kernel *k = NULL;
    CHECK_OK(kiln_program_create(kctx, src, NULL, &prog));
    CHECK_OK(kiln_kernel_create(prog, "axpb", &k));
    check_ordering(&nt, kctx, dev, k, kbuf, init);
    check_queues(&nt, kctx, k, kbuf, init);
    check_bad_input(&nt, kctx, id, plat, kbuf);
#if KILN_HAVE_CUDA
    check_wrong_backend(kctx, queue, kbuf, k, dev);
#endif
    /* kiln objects of queue's (kiln-made) context are no OpenCL mismatch */
    cl_context kiln_made = NULL;
    CHECK_OK(kiln_opencl_context_native(kiln_queue_context(queue), &kiln_made));
    CHECK(kiln_made != NULL && kiln_made != nt.ctx);

    KT_RELEASE(k, prog, kbuf);
    /* the driver's finished commands (and kiln's event watcher) may hold
     * references a little longer: give them up to 5 s */
    for (int i = 0; i < 5000 && refcount_mem(nt.mem) != mem_refs; i++)
        usleep(1000);
    CHECK(refcount_mem(nt.mem) == mem_refs);
    kiln_context_release(kctx);
    for (int i = 0; i < 5000 && refcount_ctx(nt.ctx) != ctx_refs; i++)
        usleep(1000);
    CHECK(refcount_ctx(nt.ctx) == ctx_refs);
    cl.clReleaseMemObject(nt.mem);
    cl.clReleaseCommandQueue(nt.q);
    cl.clReleaseCommandQueue(nt.qprof);
    cl.clReleaseContext(nt.ctx);
}

int main(void) {
    if (!load_opencl()) {
        KT_SKIP("no OpenCL ICD loader (libOpenCL.so.1)");
    }
    float *init = malloc(N * sizeof *init);
    for (int i = 0; i < N; i++)
        init[i] = (float)(i % 97) - 40.0f;
    kt_for_each_device(run, init);
    kiln_queue *q = NULL;
    if (!opencl_devices_run && kiln_queue_create_default("opencl:0", 0, &q) == KILN_OK) {
        printf("== no OpenCL test device; the first OpenCL device:\n");
        run(q, init); /* the default device may be a CUDA one */
        kiln_queue_release(q);
    }
    free(init);
    if (!opencl_devices_run) {
        KT_SKIP("no OpenCL test device");
    }
    return kt_report();
}
