/* The CLBlast provider (OpenCL devices): its C API, loaded with dlopen,
 * enqueued on kiln's cl_command_queue. The prototypes are declared here
 * (clblast_c.h is not needed to build kiln). */
#include <CL/cl.h>
#include <string.h>

#include "algo/linalg/blas/blas_provider.h"
#include "base/error.h"
#include "kiln/opencl.h"

enum { ROW_MAJOR = 101, COL_MAJOR = 102 };
enum { TRANS_NO = 111, TRANS_YES = 112, TRANS_CONJ = 113 };

typedef int status_t; /* CLBlastStatusCode: 0 success */
typedef unsigned short half_t;

/* One signature per scalar type: the scalars travel by value. */
#define GEMM_FN(T)                                                                                 \
    status_t (*)(int, int, int, size_t, size_t, size_t, T, cl_mem, size_t, size_t, cl_mem, size_t, \
                 size_t, T, cl_mem, size_t, size_t, cl_command_queue *, cl_event *)
#define GEMM_BATCH_FN(T)                                                                           \
    status_t (*)(int, int, int, size_t, size_t, size_t, T, cl_mem, size_t, size_t, size_t, cl_mem, \
                 size_t, size_t, size_t, T, cl_mem, size_t, size_t, size_t, size_t,                \
                 cl_command_queue *, cl_event *)
#define AXPY_FN(T)                                                                              \
    status_t (*)(size_t, T, cl_mem, size_t, size_t, cl_mem, size_t, size_t, cl_command_queue *, \
                 cl_event *)
#define SCAL_FN(T) status_t (*)(size_t, T, cl_mem, size_t, size_t, cl_command_queue *, cl_event *)
typedef status_t (*dot_fn)(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_mem, size_t, size_t,
                           cl_command_queue *, cl_event *);
typedef status_t (*nrm2_fn)(size_t, cl_mem, size_t, cl_mem, size_t, size_t, cl_command_queue *,
                            cl_event *);

/* Symbols by dtype index (S, D, C, Z, H). */
static const char *const names[] = {
    "CLBlastSgemm",
    "CLBlastDgemm",
    "CLBlastCgemm",
    "CLBlastZgemm",
    "CLBlastHgemm",
    "CLBlastSgemmStridedBatched",
    "CLBlastDgemmStridedBatched",
    "CLBlastCgemmStridedBatched",
    "CLBlastZgemmStridedBatched",
    "CLBlastHgemmStridedBatched",
    "CLBlastSaxpy",
    "CLBlastDaxpy",
    "CLBlastCaxpy",
    "CLBlastZaxpy",
    "CLBlastSscal",
    "CLBlastDscal",
    "CLBlastCscal",
    "CLBlastZscal",
    "CLBlastSdot",
    "CLBlastDdot",
    "CLBlastCdotu",
    "CLBlastZdotu",
    "CLBlastCdotc",
    "CLBlastZdotc",
    "CLBlastSnrm2",
    "CLBlastDnrm2",
    "CLBlastScnrm2",
    "CLBlastDznrm2",
};
enum { N_SYMS = sizeof names / sizeof names[0] };
enum { GEMM = 0, GEMM_BATCH = 5, AXPY = 10, SCAL = 14, DOTU = 18, DOTC = 22, NRM2 = 24 };
static void *fns[N_SYMS];

static kiln__lib lib =
    KILN__LIB("CLBlast", "libclblast1 (libclblast-dev)", "libclblast.so.1", "libclblast.so");

static kiln_status load(void) {
    return kiln__lib_load(&lib, N_SYMS, names, fns);
}

static int has_dtype(kiln_queue *q, kiln_dtype d) {
    kiln_device_info info;
    memset(&info, 0, sizeof info);
    kiln_device_get_info(kiln_queue_device(q), &info);
    if ((d == KILN_FLOAT64 || d == KILN_COMPLEX128) && !info.fp64) {
        kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "CLBlast: %s needs fp64, which %s lacks",
                        kiln_dtype_name(d), info.name);
        return 0;
    }
    if (d == KILN_FLOAT16 && !info.fp16) {
        kiln__error_set(KILN_ERROR_UNSUPPORTED, 0,
                        "CLBlast: float16 needs cl_khr_fp16, which %s lacks", info.name);
        return 0;
    }
    return 1;
}

static int trans_of(int t) {
    return t == 0 ? TRANS_NO : t == 1 ? TRANS_YES : TRANS_CONJ;
}

static kiln_status status_of(status_t s, const char *routine) {
    if (s == 0)
        return KILN_OK;
    return kiln__error_set(s == -4 || s == -61 ? KILN_ERROR_OUT_OF_DEVICE_MEMORY
                                               : KILN_ERROR_DRIVER,
                           s, "CLBlast %s failed with status %d", routine, s);
}

/* The native handles: queue and buffers. */
static kiln_status natives(kiln_queue *q, cl_command_queue *cq, size_t n,
                           const kiln__blas_mat *const *m, cl_mem *mem) {
    kiln_status st = kiln_opencl_queue_native(q, cq);
    for (size_t k = 0; st == KILN_OK && k < n; k++)
        st = m[k]->buf ? kiln_opencl_buffer_native(m[k]->buf, &mem[k]) : KILN_OK;
    return st;
}

/* A half from a double: CLBlast takes the scalars as half bits. */
static half_t to_half(double v) {
    float f = (float)v;
    uint32_t x;
    memcpy(&x, &f, 4);
    uint32_t s = (x >> 16) & 0x8000u, a = x & 0x7fffffffu;
    if (a > 0x7f800000u)
        return (half_t)(s | 0x7e00u);
    if (a >= 0x477ff000u)
        return (half_t)(s | 0x7c00u);
    if (a >= 0x38800000u) {
        uint32_t r = a - 0x38000000u;
        r += 0xfffu + ((r >> 13) & 1u);
        return (half_t)(s | (r >> 13));
    }
    return (half_t)s; /* scalars that small: zero */
}

static kiln_status gemm(kiln_queue *q, const kiln__blas_gemm *g) {
    cl_command_queue cq;
    cl_mem mem[3];
    const kiln__blas_mat *m[3] = { &g->a, &g->b, &g->c };
    kiln_status st = natives(q, &cq, 3, m, mem);
    if (st != KILN_OK)
        return st;
    int di = kiln__blas_dtype_index(g->dtype);
    int ta = trans_of(g->ta), tb = trans_of(g->tb);
    status_t s;
    int batched = g->batch > 1;
    void *f = fns[(batched ? GEMM_BATCH : GEMM) + di];
#define CALL(T, A, B)                                                                             \
    (batched                                                                                      \
         ? ((GEMM_BATCH_FN(T))f)(COL_MAJOR, ta, tb, g->m, g->n, g->k, A, mem[0], g->a.off,        \
                                 g->a.ld, g->a.bstride, mem[1], g->b.off, g->b.ld, g->b.bstride,  \
                                 B, mem[2], g->c.off, g->c.ld, g->c.bstride, g->batch, &cq, NULL) \
         : ((GEMM_FN(T))f)(COL_MAJOR, ta, tb, g->m, g->n, g->k, A, mem[0], g->a.off, g->a.ld,     \
                           mem[1], g->b.off, g->b.ld, B, mem[2], g->c.off, g->c.ld, &cq, NULL))
    switch (di) {
    case 0:
        s = CALL(float, (float)g->alpha.re, (float)g->beta.re);
        break;
    case 1:
        s = CALL(double, g->alpha.re, g->beta.re);
        break;
    case 2: {
        cl_float2 a = { { (float)g->alpha.re, (float)g->alpha.im } };
        cl_float2 b = { { (float)g->beta.re, (float)g->beta.im } };
        s = CALL(cl_float2, a, b);
        break;
    }
    case 3: {
        cl_double2 a = { { g->alpha.re, g->alpha.im } };
        cl_double2 b = { { g->beta.re, g->beta.im } };
        s = CALL(cl_double2, a, b);
        break;
    }
    default:
        s = CALL(half_t, to_half(g->alpha.re), to_half(g->beta.re));
        break;
    }
#undef CALL
    return status_of(s, batched ? "gemm (strided batched)" : "gemm");
}

/* Scnrm2/Dznrm2 want a result buffer of one complex element, and put the
 * norm in its real part: computed there, then copied to the real result. */
static kiln_status complex_nrm2(kiln_queue *q, const kiln__blas_l1 *o, cl_command_queue cq,
                                cl_mem x) {
    size_t es = kiln_dtype_size(o->dtype);
    kiln_buffer *tmp = NULL;
    cl_mem t;
    kiln_status st = kiln_buffer_create(kiln_queue_context(q), es, 0, NULL, &tmp);
    if (st == KILN_OK)
        st = kiln_opencl_buffer_native(tmp, &t);
    if (st == KILN_OK)
        st = status_of(((nrm2_fn)fns[NRM2 + kiln__blas_dtype_index(o->dtype)])(
                           o->n, t, 0, x, o->x.off, o->x.ld, &cq, NULL),
                       "nrm2");
    if (st == KILN_OK) /* after CLBlast's kernel, on any queue */
        st = kiln__native_begin(q, 0, NULL);
    if (st == KILN_OK)
        st = kiln_buffer_copy(q, tmp, 0, o->r.buf, o->r.off * (es / 2), es / 2, 0, NULL, NULL);
    kiln_buffer_release(tmp); /* lives on until the copy has ended */
    return st;
}

/* No event is asked for (NULL): kiln's barriers order the calls. */
static kiln_status level1(kiln_queue *q, const kiln__blas_l1 *o) {
    cl_command_queue cq;
    cl_mem mem[3];
    const kiln__blas_mat *m[3] = { &o->x, &o->y, &o->r };
    kiln_status st = natives(q, &cq, 3, m, mem);
    if (st != KILN_OK)
        return st;
    int di = kiln__blas_dtype_index(o->dtype);
    cl_float2 ca = { { (float)o->alpha.re, (float)o->alpha.im } };
    cl_double2 za = { { o->alpha.re, o->alpha.im } };
    status_t s = 0;
    const char *what = "axpy";
    switch (o->op) {
    case KILN__BLAS_AXPY: {
        void *f = fns[AXPY + di];
        const kiln__blas_mat *x = &o->x, *y = &o->y;
#define AXPY_ARGS mem[0], x->off, x->ld, mem[1], y->off, y->ld, &cq, NULL
        s = di == 0   ? ((AXPY_FN(float))f)(o->n, (float)o->alpha.re, AXPY_ARGS)
            : di == 1 ? ((AXPY_FN(double))f)(o->n, o->alpha.re, AXPY_ARGS)
            : di == 2 ? ((AXPY_FN(cl_float2))f)(o->n, ca, AXPY_ARGS)
                      : ((AXPY_FN(cl_double2))f)(o->n, za, AXPY_ARGS);
#undef AXPY_ARGS
        break;
    }
    case KILN__BLAS_SCAL: {
        void *f = fns[SCAL + di];
        what = "scal";
#define SCAL_ARGS mem[0], o->x.off, o->x.ld, &cq, NULL
        s = di == 0   ? ((SCAL_FN(float))f)(o->n, (float)o->alpha.re, SCAL_ARGS)
            : di == 1 ? ((SCAL_FN(double))f)(o->n, o->alpha.re, SCAL_ARGS)
            : di == 2 ? ((SCAL_FN(cl_float2))f)(o->n, ca, SCAL_ARGS)
                      : ((SCAL_FN(cl_double2))f)(o->n, za, SCAL_ARGS);
#undef SCAL_ARGS
        break;
    }
    case KILN__BLAS_DOT:
    case KILN__BLAS_DOTC:
        what = "dot";
        s = ((dot_fn)fns[(o->op == KILN__BLAS_DOTC ? DOTC - 2 : DOTU) + di])(
            o->n, mem[2], o->r.off, mem[0], o->x.off, o->x.ld, mem[1], o->y.off, o->y.ld, &cq,
            NULL);
        break;
    default:
        what = "nrm2";
        if (di >= 2) /* CLBlast writes a complex element: via a temporary */
            return complex_nrm2(q, o, cq, mem[0]);
        s = ((nrm2_fn)fns[NRM2 + di])(o->n, mem[2], o->r.off, mem[0], o->x.off, o->x.ld, &cq, NULL);
        break;
    }
    return status_of(s, what);
}

const kiln__blas_provider kiln__blas_clblast = {
    .name = "CLBlast",
    .languages = 1u << KILN_LANG_OPENCL_C,
    .host = 0,
    .has_dtype = has_dtype,
    .load = load,
    .gemm = gemm,
    .level1 = level1,
};
