/* The cuFFT provider (CUDA devices): libcufft loaded with dlopen, plans
 * (cufftPlanMany) cached per context and shape, bound to kiln's stream
 * (cufftSetStream) for each call under the plan cache's lock. cuFFT does
 * not normalise: fft.c scales with a kernel on the same stream. The
 * prototypes are declared here (cufft.h is not needed to build kiln). */
#include <cuda.h>
#include <stdlib.h>

#include "algo/linalg/fft/fft_provider.h"
#include "base/error.h"
#include "kiln/cuda.h"

enum { R2C = 0x2a, C2R = 0x2c, C2C = 0x29, D2Z = 0x6a, Z2D = 0x6c, Z2Z = 0x69 };
enum { DIR_FORWARD = -1, DIR_INVERSE = 1 };

typedef int handle_t;
typedef int (*plan_many_fn)(handle_t *, int, int *, int *, int, int, int *, int, int, int, int);
typedef int (*destroy_fn)(handle_t);
typedef int (*set_stream_fn)(handle_t, CUstream);
typedef int (*exec_c_fn)(handle_t, void *, void *, int);
typedef int (*exec_r_fn)(handle_t, void *, void *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static const char *const names[] = { "cufftPlanMany", "cufftDestroy", "cufftSetStream",
                                     "cufftExecC2C",  "cufftExecZ2Z", "cufftExecR2C",
                                     "cufftExecD2Z",  "cufftExecC2R", "cufftExecZ2D" };
enum {
    PLAN_MANY,
    DESTROY,
    SET_STREAM,
    EXEC_C2C,
    EXEC_Z2Z,
    EXEC_R2C,
    EXEC_D2Z,
    EXEC_C2R,
    EXEC_Z2D,
    N_SYMS
};
static void *fns[N_SYMS];
static const char *const cu_names[] = { "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2" };
static void *cu_fns[2];

static kiln__lib lib = KILN__LIB("cuFFT",
                                 "libcufft11 (nvidia-cuda-toolkit), "
                                 "or the CUDA toolkit's libcufft",
                                 "libcufft.so", "libcufft.so.12", "libcufft.so.11");
static kiln__lib cuda_lib = KILN__LIB("the CUDA driver",
                                      "libcuda1 (the "
                                      "NVIDIA driver)",
                                      "libcuda.so.1", "libcuda.so");

static kiln_status load(void) {
    kiln_status st = kiln__lib_load(&cuda_lib, 2, cu_names, cu_fns);
    return st == KILN_OK ? kiln__lib_load(&lib, N_SYMS, names, fns) : st;
}

static kiln_status check(kiln_queue *q, const kiln__fft *f) {
    (void)q;
    for (unsigned d = 0; d < f->rank; d++)
        if (f->n[d] > 0x7fffffffu)
            return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cuFFT: a length above 2^31-1");
    if (f->batch > 0x7fffffffu)
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cuFFT: a batch above 2^31-1");
    return KILN_OK;
}

static kiln_status status_of(int s, const char *what) {
    if (s == 0)
        return KILN_OK;
    return kiln__error_set(s == 2 ? KILN_ERROR_OUT_OF_DEVICE_MEMORY : KILN_ERROR_DRIVER, s,
                           "cuFFT %s failed with status %d", what, s);
}

typedef struct cuplan {
    handle_t h;
    CUcontext ctx;
} cuplan;

static void plan_destroy(void *p) {
    cuplan *c = p;
    if (((ctx_push_fn)cu_fns[0])(c->ctx) == CUDA_SUCCESS) {
        ((destroy_fn)fns[DESTROY])(c->h);
        CUcontext old;
        ((ctx_pop_fn)cu_fns[1])(&old);
    }
    free(c);
}

/* Called with the context current (exec pushes it first). */
static kiln_status make(kiln_context *ctx, const kiln__fft *f, void **plan) {
    cuplan *c = kiln__calloc(1, sizeof *c);
    if (!c)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "cuFFT plan");
    kiln_status st = kiln_cuda_context_native(ctx, &c->ctx);
    if (st != KILN_OK) {
        free(c);
        return st;
    }
    int n[3] = { (int)f->n[0], (int)f->n[1], (int)f->n[2] };
    int type = f->kind == KILN__FFT_C2C   ? (f->dbl ? Z2Z : C2C)
               : f->kind == KILN__FFT_R2C ? (f->dbl ? D2Z : R2C)
                                          : (f->dbl ? Z2D : C2R);
    /* NULL embeds: the basic (dense) layout, as fft.c hands over */
    int s = ((plan_many_fn)fns[PLAN_MANY])(&c->h, (int)f->rank, n, NULL, 1, (int)f->idist, NULL, 1,
                                           (int)f->odist, type, (int)f->batch);
    if (s != 0) {
        free(c);
        return status_of(s, "cufftPlanMany");
    }
    *plan = c;
    return KILN_OK;
}

static const char owner = 0;

/* The plan is made (cufftPlanMany waits for the device) before the queue
 * goes native: a native queue's stream may wait on the device for a user
 * event, and that wait would block the plan for ever. */
static kiln_status exec(kiln_queue *q, const kiln__fft *f) {
    CUstream stream;
    CUdeviceptr in, out;
    CUcontext cctx;
    kiln_status st = kiln_cuda_context_native(f->ctx, &cctx);
    if (st != KILN_OK)
        return st;
    if (((ctx_push_fn)cu_fns[0])(cctx) != CUDA_SUCCESS)
        return kiln__error_set(KILN_ERROR_DRIVER, 0, "cuFFT: cuCtxPushCurrent failed");
    void *p = NULL;
    kiln__plan_cache *locked = NULL;
    st = kiln__plan_get(f->ctx, &owner, f, make, plan_destroy, &p, &locked);
    if (st == KILN_OK) {
        st = kiln_cuda_queue_native(q, &stream);
        if (st == KILN_OK)
            st = kiln_cuda_buffer_native(f->in, &in);
        if (st == KILN_OK)
            st = kiln_cuda_buffer_native(f->out, &out);
        if (st == KILN_OK) {
            handle_t h = ((cuplan *)p)->h;
            int s = ((set_stream_fn)fns[SET_STREAM])(h, stream);
            int dir = f->inverse ? DIR_INVERSE : DIR_FORWARD;
            if (s == 0) {
                if (f->kind == KILN__FFT_C2C)
                    s = ((exec_c_fn)fns[f->dbl ? EXEC_Z2Z : EXEC_C2C])(h, (void *)in, (void *)out,
                                                                       dir);
                else
                    s = ((exec_r_fn)fns[f->kind == KILN__FFT_R2C ? (f->dbl ? EXEC_D2Z : EXEC_R2C)
                                                                 : (f->dbl ? EXEC_Z2D : EXEC_C2R)])(
                        h, (void *)in, (void *)out);
            }
            st = status_of(s, "exec");
        }
        kiln__plan_unlock(locked);
    }
    CUcontext old;
    ((ctx_pop_fn)cu_fns[1])(&old);
    return st;
}

const kiln__fft_provider kiln__fft_cufft = {
    .name = "cuFFT",
    .languages = 1u << KILN_LANG_CUDA_C,
    .host = 0,
    .scales = 0,
    .load = load,
    .check = check,
    .exec = exec,
};
