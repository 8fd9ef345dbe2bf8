/* The clFFT provider (OpenCL devices): libclFFT loaded with dlopen,
 * clfftSetup once per process, plans baked per context and shape (cached),
 * enqueued on kiln's cl_command_queue with clfftEnqueueTransform; clFFT
 * applies the normalisation itself (clfftSetPlanScale). Lengths must have
 * only the prime factors 2, 3, 5, 7, 11 and 13. Prototypes are declared
 * here (clFFT.h is not needed to build kiln). */
#include <CL/cl.h>
#include <stdlib.h>
#include <string.h>

#include "algo/linalg/fft/fft_provider.h"
#include "base/error.h"
#include "kiln/opencl.h"

typedef size_t plan_t;
typedef int status_t;
enum { COMPLEX_INTERLEAVED = 1, HERMITIAN_INTERLEAVED = 3, REAL = 5 };
enum { SINGLE = 1, DOUBLE = 2, FORWARD = -1, BACKWARD = 1, INPLACE = 1, OUTOFPLACE = 2 };

typedef struct setup_data {
    cl_uint major, minor, patch;
    cl_ulong debug_flags;
} setup_data;

typedef status_t (*setup_fn)(const setup_data *);
typedef status_t (*teardown_fn)(void);
typedef status_t (*version_fn)(cl_uint *, cl_uint *, cl_uint *);
typedef status_t (*create_fn)(plan_t *, cl_context, int, const size_t *);
typedef status_t (*destroy_fn)(plan_t *);
typedef status_t (*set_int_fn)(plan_t, int);
typedef status_t (*set_layout_fn)(plan_t, int, int);
typedef status_t (*set_scale_fn)(plan_t, int, cl_float);
typedef status_t (*set_batch_fn)(plan_t, size_t);
typedef status_t (*set_dist_fn)(plan_t, size_t, size_t);
typedef status_t (*set_stride_fn)(plan_t, int, size_t *);
typedef status_t (*bake_fn)(plan_t, cl_uint, cl_command_queue *, void *, void *);
typedef status_t (*enqueue_fn)(plan_t, int, cl_uint, cl_command_queue *, cl_uint, const cl_event *,
                               cl_event *, cl_mem *, cl_mem *, cl_mem);

static const char *const names[] = {
    "clfftSetup",           "clfftGetVersion",       "clfftCreateDefaultPlan",
    "clfftDestroyPlan",     "clfftSetPlanPrecision", "clfftSetLayout",
    "clfftSetPlanScale",    "clfftSetPlanBatchSize", "clfftSetPlanDistance",
    "clfftSetPlanInStride", "clfftSetPlanOutStride", "clfftSetResultLocation",
    "clfftBakePlan",        "clfftEnqueueTransform", "clfftTeardown"
};
enum {
    SETUP,
    VERSION,
    CREATE,
    DESTROY,
    PRECISION,
    LAYOUT,
    SCALE,
    BATCH,
    DIST,
    IN_STRIDE,
    OUT_STRIDE,
    PLACEMENT,
    BAKE,
    ENQUEUE,
    TEARDOWN,
    N_SYMS
};
static void *fns[N_SYMS];

static kiln__lib lib =
    KILN__LIB("clFFT", "libclfft2 (libclfft-dev)", "libclFFT.so.2", "libclFFT.so");
static pthread_mutex_t setup_lock = PTHREAD_MUTEX_INITIALIZER;
static int setup_state; /* 0 not yet, 1 done, <0 its failure */

/* clFFT prints a warning at exit unless torn down: kiln prints nothing. */
static void teardown(void) {
    ((teardown_fn)fns[TEARDOWN])();
}

static kiln_status load(void) {
    kiln_status st = kiln__lib_load(&lib, N_SYMS, names, fns);
    if (st != KILN_OK)
        return st;
    pthread_mutex_lock(&setup_lock);
    if (setup_state == 0) {
        setup_data d;
        memset(&d, 0, sizeof d);
        ((version_fn)fns[VERSION])(&d.major, &d.minor, &d.patch);
        status_t s = ((setup_fn)fns[SETUP])(&d);
        setup_state = s == 0 ? 1 : (s < 0 ? s : -s);
        if (s == 0)
            atexit(teardown);
    }
    int state = setup_state;
    pthread_mutex_unlock(&setup_lock);
    if (state != 1)
        return kiln__error_set(KILN_ERROR_DRIVER, state, "clfftSetup failed with status %d", state);
    return KILN_OK;
}

static int radix_ok(size_t n) {
    static const size_t primes[] = { 2, 3, 5, 7, 11, 13 };
    for (size_t k = 0; k < 6; k++)
        while (n > 1 && n % primes[k] == 0)
            n /= primes[k];
    return n == 1;
}

static kiln_status check(kiln_queue *q, const kiln__fft *f) {
    (void)q;
    for (unsigned d = 0; d < f->rank; d++)
        if (!radix_ok(f->n[d]))
            return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                                   "clFFT cannot transform length %zu (only "
                                   "products of 2, 3, 5, 7, 11 and 13)",
                                   f->n[d]);
    return KILN_OK;
}

static kiln_status status_of(status_t s, const char *what) {
    if (s == 0)
        return KILN_OK;
    return kiln__error_set(s == CL_MEM_OBJECT_ALLOCATION_FAILURE || s == CL_OUT_OF_RESOURCES
                               ? KILN_ERROR_OUT_OF_DEVICE_MEMORY
                               : KILN_ERROR_DRIVER,
                           s, "clFFT %s failed with status %d", what, s);
}

typedef struct cplan {
    plan_t p;
} cplan;

static void plan_destroy(void *p) {
    cplan *c = p;
    ((destroy_fn)fns[DESTROY])(&c->p);
    free(c);
}

/* clFFT lists lengths and strides fastest dimension first. */
static kiln_status make_with(kiln_queue *q, const kiln__fft *f, void **plan) {
    cl_context cctx;
    cl_command_queue cq;
    kiln_status st = kiln_opencl_context_native(kiln_queue_context(q), &cctx);
    if (st == KILN_OK)
        st = kiln_opencl_queue_native(q, &cq);
    if (st != KILN_OK)
        return st;
    unsigned r = f->rank;
    size_t len[3], is[3], os[3];
    size_t last = f->n[r - 1], half = last / 2 + 1;
    size_t ilast = f->kind == KILN__FFT_C2R ? half : last;
    size_t olast = f->kind == KILN__FFT_R2C ? half : last;
    size_t ip = 1, op = 1;
    for (unsigned d = 0; d < r; d++) {
        len[d] = f->n[r - 1 - d];
        is[d] = ip;
        os[d] = op;
        ip *= d == 0 ? ilast : len[d];
        op *= d == 0 ? olast : len[d];
    }
    cplan *c = kiln__calloc(1, sizeof *c);
    if (!c)
        return kiln__error_set(KILN_ERROR_OUT_OF_HOST_MEMORY, 0, "clFFT plan");
    status_t s = ((create_fn)fns[CREATE])(&c->p, cctx, (int)r, len);
    const char *what = "clfftCreateDefaultPlan";
    int il = f->kind == KILN__FFT_C2C   ? COMPLEX_INTERLEAVED
             : f->kind == KILN__FFT_R2C ? REAL
                                        : HERMITIAN_INTERLEAVED;
    int ol = f->kind == KILN__FFT_C2C   ? COMPLEX_INTERLEAVED
             : f->kind == KILN__FFT_R2C ? HERMITIAN_INTERLEAVED
                                        : REAL;
    float fs = f->dbl ? 1.0f : (float)f->scale; /* double: fft.c scales */
#define STEP(call, name) \
    if (s == 0) {        \
        s = (call);      \
        what = name;     \
    }
    STEP(((set_int_fn)fns[PRECISION])(c->p, f->dbl ? DOUBLE : SINGLE), "clfftSetPlanPrecision")
    STEP(((set_layout_fn)fns[LAYOUT])(c->p, il, ol), "clfftSetLayout")
    STEP(((set_int_fn)fns[PLACEMENT])(c->p, f->in == f->out ? INPLACE : OUTOFPLACE),
         "clfftSetResultLocation")
    STEP(((set_scale_fn)fns[SCALE])(c->p, f->inverse ? BACKWARD : FORWARD, fs), "clfftSetPlanScale")
    STEP(((set_batch_fn)fns[BATCH])(c->p, f->batch), "clfftSetPlanBatchSize")
    STEP(((set_stride_fn)fns[IN_STRIDE])(c->p, (int)r, is), "clfftSetPlanInStride")
    STEP(((set_stride_fn)fns[OUT_STRIDE])(c->p, (int)r, os), "clfftSetPlanOutStride")
    STEP(((set_dist_fn)fns[DIST])(c->p, f->idist, f->odist), "clfftSetPlanDistance")
    STEP(((bake_fn)fns[BAKE])(c->p, 1, &cq, NULL, NULL), "clfftBakePlan")
#undef STEP
    if (s != 0) {
        if (c->p)
            ((destroy_fn)fns[DESTROY])(&c->p);
        free(c);
        return status_of(s, what);
    }
    *plan = c;
    return KILN_OK;
}

/* make() of the plan cache has no queue: it is passed through here. */
static __thread kiln_queue *making_for;

static kiln_status make(kiln_context *ctx, const kiln__fft *f, void **plan) {
    (void)ctx;
    return make_with(making_for, f, plan);
}

static const char owner = 0;

static kiln_status exec(kiln_queue *q, const kiln__fft *f) {
    cl_command_queue cq;
    cl_mem in, out;
    kiln_status st = kiln_opencl_queue_native(q, &cq);
    if (st == KILN_OK)
        st = kiln_opencl_buffer_native(f->in, &in);
    if (st == KILN_OK)
        st = kiln_opencl_buffer_native(f->out, &out);
    if (st != KILN_OK)
        return st;
    void *p = NULL;
    kiln__plan_cache *locked = NULL;
    making_for = q;
    st = kiln__plan_get(f->ctx, &owner, f, make, plan_destroy, &p, &locked);
    making_for = NULL;
    if (st != KILN_OK)
        return st;
    status_t s =
        ((enqueue_fn)fns[ENQUEUE])(((cplan *)p)->p, f->inverse ? BACKWARD : FORWARD, 1, &cq, 0,
                                   NULL, NULL, &in, f->in == f->out ? NULL : &out, NULL);
    kiln__plan_unlock(locked);
    return status_of(s, "clfftEnqueueTransform");
}

const kiln__fft_provider kiln__fft_clfft = {
    .name = "clFFT",
    .languages = 1u << KILN_LANG_OPENCL_C,
    .host = 0,
    .scales = 2,
    .load = load,
    .check = check,
    .exec = exec,
};
