/* The cuBLAS provider (CUDA devices): libcublas loaded with dlopen, one
 * handle per kiln context, bound to kiln's stream (cublasSetStream) for
 * each call under the handle's lock. The prototypes are declared here
 * (cublas_v2.h is not needed to build kiln). float32 runs in strict FP32
 * (CUBLAS_COMPUTE_32F, default math mode: no TF32). */
#include <cuda.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "algo/linalg/blas/blas_provider.h"
#include "base/error.h"
#include "kiln/cuda.h"

enum { R_16F = 2, R_32F = 0, C_32F = 4, R_64F = 1, C_64F = 5 };
enum { COMPUTE_32F = 68, COMPUTE_64F = 70, GEMM_DEFAULT = -1 };
enum { PTR_HOST = 0, PTR_DEVICE = 1 };

typedef void *handle_t;
typedef int (*create_fn)(handle_t *);
typedef int (*destroy_fn)(handle_t);
typedef int (*set_stream_fn)(handle_t, CUstream);
typedef int (*set_ptr_mode_fn)(handle_t, int);
typedef int (*gemm_ex_fn)(handle_t, int, int, int, int, int, const void *, const void *, int, int,
                          const void *, int, int, const void *, void *, int, int, int, int);
typedef int (*gemm_sb_fn)(handle_t, int, int, int, int, int, const void *, const void *, int, int,
                          long long, const void *, int, int, long long, const void *, void *, int,
                          int, long long, int, int, int);
typedef int (*axpy_fn)(handle_t, int, const void *, const void *, int, void *, int);
typedef int (*scal_fn)(handle_t, int, const void *, void *, int);
typedef int (*dot_fn)(handle_t, int, const void *, int, const void *, int, void *);
typedef int (*nrm2_fn)(handle_t, int, const void *, int, void *);
typedef CUresult (*ctx_push_fn)(CUcontext);
typedef CUresult (*ctx_pop_fn)(CUcontext *);

static const char *const names[] = {
    "cublasCreate_v2",         "cublasDestroy_v2", "cublasSetStream_v2",
    "cublasSetPointerMode_v2", "cublasGemmEx",     "cublasGemmStridedBatchedEx",
    "cublasSaxpy_v2",          "cublasDaxpy_v2",   "cublasCaxpy_v2",
    "cublasZaxpy_v2",          "cublasSscal_v2",   "cublasDscal_v2",
    "cublasCscal_v2",          "cublasZscal_v2",   "cublasSdot_v2",
    "cublasDdot_v2",           "cublasCdotu_v2",   "cublasZdotu_v2",
    "cublasCdotc_v2",          "cublasZdotc_v2",   "cublasSnrm2_v2",
    "cublasDnrm2_v2",          "cublasScnrm2_v2",  "cublasDznrm2_v2",
};
enum { N_SYMS = sizeof names / sizeof names[0] };
enum {
    CREATE,
    DESTROY,
    SET_STREAM,
    SET_PTR_MODE,
    GEMM_EX,
    GEMM_SB,
    AXPY,
    SCAL = AXPY + 4,
    DOTU = SCAL + 4,
    DOTC = DOTU + 4,
    NRM2 = DOTC + 2
};
static void *fns[N_SYMS];
static const char *const cu_names[] = { "cuCtxPushCurrent_v2", "cuCtxPopCurrent_v2" };
static void *cu_fns[2];

static kiln__lib lib = KILN__LIB("cuBLAS",
                                 "libcublas12 (nvidia-cuda-toolkit), "
                                 "or the CUDA toolkit's libcublas",
                                 "libcublas.so", "libcublas.so.13", "libcublas.so.12");
static kiln__lib cuda_lib = KILN__LIB("the CUDA driver",
                                      "libcuda1 (the "
                                      "NVIDIA driver)",
                                      "libcuda.so.1", "libcuda.so");

static kiln_status load(void) {
    kiln_status st = kiln__lib_load(&cuda_lib, 2, cu_names, cu_fns);
    return st == KILN_OK ? kiln__lib_load(&lib, N_SYMS, names, fns) : st;
}

static int has_dtype(kiln_queue *q, kiln_dtype d) {
    (void)q;
    return kiln__blas_dtype_index(d) >= 0;
}

/* One handle per context, made with the context current. */
typedef struct cu_handle {
    handle_t h;
    CUcontext ctx;
    pthread_mutex_t lock;
} cu_handle;

static void handle_free(void *p) {
    cu_handle *c = p;
    if (c->h && ((ctx_push_fn)cu_fns[0])(c->ctx) == CUDA_SUCCESS) {
        ((destroy_fn)fns[DESTROY])(c->h);
        CUcontext old;
        ((ctx_pop_fn)cu_fns[1])(&old);
    }
    pthread_mutex_destroy(&c->lock);
    free(c);
}

static void *handle_make(kiln_context *context, void *arg) {
    (void)arg;
    cu_handle *c = kiln__calloc(1, sizeof *c);
    if (!c)
        return NULL;
    pthread_mutex_init(&c->lock, NULL);
    if (kiln_cuda_context_native(context, &c->ctx) != KILN_OK ||
        ((ctx_push_fn)cu_fns[0])(c->ctx) != CUDA_SUCCESS) {
        handle_free(c);
        return NULL;
    }
    int s = ((create_fn)fns[CREATE])(&c->h);
    CUcontext old;
    ((ctx_pop_fn)cu_fns[1])(&old);
    if (s != 0) {
        c->h = NULL;
        handle_free(c);
        return NULL;
    }
    return c;
}

static const char handle_key = 0;

/* Locks the context's handle, makes its context current and binds it to
 * q's stream; end() undoes that. The handle is made before the queue goes
 * native: cublasCreate waits for the device, which a stream waiting on the
 * device for a user event (a native queue's gate) would block for ever. */
static kiln_status begin(kiln_queue *q, int ptr_mode, cu_handle **out) {
    void *data = NULL;
    CUstream stream;
    kiln_status st = kiln_context_attach(kiln_queue_context(q), &handle_key, handle_make, NULL,
                                         handle_free, &data);
    if (st == KILN_OK && !data)
        st = kiln__error_set(KILN_ERROR_DRIVER, 0, "cuBLAS: cublasCreate failed");
    if (st == KILN_OK)
        st = kiln_cuda_queue_native(q, &stream);
    if (st != KILN_OK)
        return st;
    cu_handle *c = data;
    pthread_mutex_lock(&c->lock);
    if (((ctx_push_fn)cu_fns[0])(c->ctx) != CUDA_SUCCESS) {
        pthread_mutex_unlock(&c->lock);
        return kiln__error_set(KILN_ERROR_DRIVER, 0, "cuBLAS: cuCtxPushCurrent failed");
    }
    ((set_stream_fn)fns[SET_STREAM])(c->h, stream);
    ((set_ptr_mode_fn)fns[SET_PTR_MODE])(c->h, ptr_mode);
    *out = c;
    return KILN_OK;
}

static kiln_status end(cu_handle *c, int s, const char *routine) {
    CUcontext old;
    ((ctx_pop_fn)cu_fns[1])(&old);
    pthread_mutex_unlock(&c->lock);
    if (s == 0)
        return KILN_OK;
    return kiln__error_set(s == 3 ? KILN_ERROR_OUT_OF_DEVICE_MEMORY : KILN_ERROR_DRIVER, s,
                           "cuBLAS %s failed with status %d", routine, s);
}

static kiln_status ptr(const kiln__blas_mat *m, size_t es, CUdeviceptr *p) {
    if (!m->buf) {
        *p = 0;
        return KILN_OK;
    }
    kiln_status st = kiln_cuda_buffer_native(m->buf, p);
    *p += m->off * es;
    return st;
}

static int too_big(size_t v) {
    return v > 0x7fffffffu;
}

static kiln_status gemm(kiln_queue *q, const kiln__blas_gemm *g) {
    if (too_big(g->m) || too_big(g->n) || too_big(g->k) || too_big(g->batch))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cuBLAS: a dimension above 2^31-1");
    static const int types[5] = { R_32F, R_64F, C_32F, C_64F, R_16F };
    int di = kiln__blas_dtype_index(g->dtype);
    size_t es = kiln_dtype_size(g->dtype);
    CUdeviceptr A, B, C;
    kiln_status st = ptr(&g->a, es, &A);
    if (st == KILN_OK)
        st = ptr(&g->b, es, &B);
    if (st == KILN_OK)
        st = ptr(&g->c, es, &C);
    if (st != KILN_OK)
        return st;
    /* scalars: float for float16/float32/complex64, double otherwise */
    float fa[2] = { (float)g->alpha.re, (float)g->alpha.im };
    float fb[2] = { (float)g->beta.re, (float)g->beta.im };
    double da[2] = { g->alpha.re, g->alpha.im }, db[2] = { g->beta.re, g->beta.im };
    int dbl = di == 1 || di == 3;
    const void *al = dbl ? (void *)da : (void *)fa;
    const void *be = dbl ? (void *)db : (void *)fb;
    int t = types[di], ct = dbl ? COMPUTE_64F : COMPUTE_32F;
    int lda = (int)(g->a.ld ? g->a.ld : 1), ldb = (int)(g->b.ld ? g->b.ld : 1),
        ldc = (int)(g->c.ld ? g->c.ld : 1);
    cu_handle *c;
    st = begin(q, PTR_HOST, &c);
    if (st != KILN_OK)
        return st;
    int s;
    if (g->batch == 1)
        s = ((gemm_ex_fn)fns[GEMM_EX])(c->h, g->ta, g->tb, (int)g->m, (int)g->n, (int)g->k, al,
                                       (void *)A, t, lda, (void *)B, t, ldb, be, (void *)C, t, ldc,
                                       ct, GEMM_DEFAULT);
    else
        s = ((gemm_sb_fn)fns[GEMM_SB])(c->h, g->ta, g->tb, (int)g->m, (int)g->n, (int)g->k, al,
                                       (void *)A, t, lda, (long long)g->a.bstride, (void *)B, t,
                                       ldb, (long long)g->b.bstride, be, (void *)C, t, ldc,
                                       (long long)g->c.bstride, (int)g->batch, ct, GEMM_DEFAULT);
    return end(c, s, g->batch == 1 ? "GemmEx" : "GemmStridedBatchedEx");
}

static kiln_status level1(kiln_queue *q, const kiln__blas_l1 *o) {
    if (too_big(o->n) || too_big(o->x.ld) || too_big(o->y.ld))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "cuBLAS: a size above 2^31-1");
    int di = kiln__blas_dtype_index(o->dtype);
    size_t es = kiln_dtype_size(o->dtype);
    CUdeviceptr x, y, r;
    kiln_status st = ptr(&o->x, es, &x);
    if (st == KILN_OK)
        st = ptr(&o->y, es, &y);
    /* nrm2's result is of the parts' dtype */
    if (st == KILN_OK)
        st = ptr(&o->r, o->op == KILN__BLAS_NRM2 && di >= 2 ? es / 2 : es, &r);
    if (st != KILN_OK)
        return st;
    float fa[2] = { (float)o->alpha.re, (float)o->alpha.im };
    double da[2] = { o->alpha.re, o->alpha.im };
    const void *al = di == 1 || di == 3 ? (void *)da : (void *)fa;
    int n = (int)o->n, ix = (int)o->x.ld, iy = (int)o->y.ld;
    int result = o->op >= KILN__BLAS_DOT;
    cu_handle *c;
    st = begin(q, result ? PTR_DEVICE : PTR_HOST, &c);
    if (st != KILN_OK)
        return st;
    int s;
    const char *what;
    switch (o->op) {
    case KILN__BLAS_AXPY:
        what = "axpy";
        s = ((axpy_fn)fns[AXPY + di])(c->h, n, al, (void *)x, ix, (void *)y, iy);
        break;
    case KILN__BLAS_SCAL:
        what = "scal";
        s = ((scal_fn)fns[SCAL + di])(c->h, n, al, (void *)x, ix);
        break;
    case KILN__BLAS_DOT:
    case KILN__BLAS_DOTC:
        what = "dot";
        s = ((dot_fn)fns[(o->op == KILN__BLAS_DOTC ? DOTC - 2 : DOTU) + di])(
            c->h, n, (void *)x, ix, (void *)y, iy, (void *)r);
        break;
    default:
        what = "nrm2";
        s = ((nrm2_fn)fns[NRM2 + di])(c->h, n, (void *)x, ix, (void *)r);
        break;
    }
    return end(c, s, what);
}

const kiln__blas_provider kiln__blas_cublas = {
    .name = "cuBLAS",
    .languages = 1u << KILN_LANG_CUDA_C,
    .host = 0,
    .has_dtype = has_dtype,
    .load = load,
    .gemm = gemm,
    .level1 = level1,
};
