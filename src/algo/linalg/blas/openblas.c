/* The OpenBLAS provider: the CBLAS interface of the host library, loaded
 * with dlopen, run on the host memory of OpenCL CPU devices (PoCL) inside a
 * host task (linalg_lib.h). Its threads use the cores PoCL's would. */
#include <limits.h>
#include <string.h>

#include "algo/linalg/blas/blas_provider.h"
#include "base/error.h"

enum { COL_MAJOR = 102, NO_TRANS = 111, TRANS = 112, CONJ_TRANS = 113 };

typedef void (*sgemm_fn)(int, int, int, int, int, int, float, const float *, int, const float *,
                         int, float, float *, int);
typedef void (*dgemm_fn)(int, int, int, int, int, int, double, const double *, int, const double *,
                         int, double, double *, int);
typedef void (*cgemm_fn)(int, int, int, int, int, int, const void *, const void *, int,
                         const void *, int, const void *, void *, int);
typedef void (*saxpy_fn)(int, float, const float *, int, float *, int);
typedef void (*daxpy_fn)(int, double, const double *, int, double *, int);
typedef void (*caxpy_fn)(int, const void *, const void *, int, void *, int);
typedef void (*sscal_fn)(int, float, float *, int);
typedef void (*dscal_fn)(int, double, double *, int);
typedef void (*cscal_fn)(int, const void *, void *, int);
typedef float (*sdot_fn)(int, const float *, int, const float *, int);
typedef double (*ddot_fn)(int, const double *, int, const double *, int);
typedef void (*cdot_fn)(int, const void *, int, const void *, int, void *);
typedef float (*snrm2_fn)(int, const void *, int);
typedef double (*dnrm2_fn)(int, const void *, int);

static const char *const names[] = {
    "cblas_sgemm",     "cblas_dgemm",     "cblas_cgemm",     "cblas_zgemm", "cblas_saxpy",
    "cblas_daxpy",     "cblas_caxpy",     "cblas_zaxpy",     "cblas_sscal", "cblas_dscal",
    "cblas_cscal",     "cblas_zscal",     "cblas_sdot",      "cblas_ddot",  "cblas_cdotu_sub",
    "cblas_zdotu_sub", "cblas_cdotc_sub", "cblas_zdotc_sub", "cblas_snrm2", "cblas_dnrm2",
    "cblas_scnrm2",    "cblas_dznrm2",
};
enum { N_SYMS = sizeof names / sizeof names[0] };
enum { GEMM = 0, AXPY = 4, SCAL = 8, DOTU = 12, DOTC = 16, NRM2 = 18 };
static void *fns[N_SYMS];

static kiln__lib lib =
    KILN__LIB("OpenBLAS", "libopenblas0 (libopenblas-dev)", "libopenblas.so.0", "libopenblas.so");

static kiln_status load(void) {
    return kiln__lib_load(&lib, N_SYMS, names, fns);
}

static int has_dtype(kiln_queue *q, kiln_dtype d) {
    (void)q;
    return kiln__blas_dtype_index(d) >= 0 && d != KILN_FLOAT16;
}

static int too_big(size_t v) {
    return v > (size_t)INT_MAX;
}

static kiln_status gemm(kiln_queue *q, const kiln__blas_gemm *g) {
    (void)q;
    if (too_big(g->m) || too_big(g->n) || too_big(g->k) || too_big(g->a.ld) || too_big(g->b.ld) ||
        too_big(g->c.ld))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "OpenBLAS: a dimension above 2^31-1");
    int di = kiln__blas_dtype_index(g->dtype);
    size_t es = kiln_dtype_size(g->dtype);
    int ta = NO_TRANS + g->ta, tb = NO_TRANS + g->tb;
    int m = (int)g->m, n = (int)g->n, k = (int)g->k;
    int lda = (int)(g->a.ld ? g->a.ld : 1), ldb = (int)(g->b.ld ? g->b.ld : 1),
        ldc = (int)(g->c.ld ? g->c.ld : 1);
    float fa[2] = { (float)g->alpha.re, (float)g->alpha.im };
    float fb[2] = { (float)g->beta.re, (float)g->beta.im };
    double da[2] = { g->alpha.re, g->alpha.im }, db[2] = { g->beta.re, g->beta.im };
    for (size_t i = 0; i < g->batch; i++) {
        const char *A = (const char *)g->a.host + (g->a.off + i * g->a.bstride) * es;
        const char *B = (const char *)g->b.host + (g->b.off + i * g->b.bstride) * es;
        char *C = (char *)g->c.host + (g->c.off + i * g->c.bstride) * es;
        switch (di) {
        case 0:
            ((sgemm_fn)fns[GEMM])(COL_MAJOR, ta, tb, m, n, k, fa[0], (const float *)A, lda,
                                  (const float *)B, ldb, fb[0], (float *)C, ldc);
            break;
        case 1:
            ((dgemm_fn)fns[GEMM + 1])(COL_MAJOR, ta, tb, m, n, k, da[0], (const double *)A, lda,
                                      (const double *)B, ldb, db[0], (double *)C, ldc);
            break;
        default:
            ((cgemm_fn)fns[GEMM + di])(COL_MAJOR, ta, tb, m, n, k,
                                       di == 2 ? (void *)fa : (void *)da, A, lda, B, ldb,
                                       di == 2 ? (void *)fb : (void *)db, C, ldc);
            break;
        }
    }
    return KILN_OK;
}

static kiln_status level1(kiln_queue *q, const kiln__blas_l1 *o) {
    (void)q;
    if (too_big(o->n) || too_big(o->x.ld) || too_big(o->y.ld))
        return kiln__error_set(KILN_ERROR_UNSUPPORTED, 0, "OpenBLAS: a size above 2^31-1");
    int di = kiln__blas_dtype_index(o->dtype);
    size_t es = kiln_dtype_size(o->dtype);
    int n = (int)o->n, ix = (int)o->x.ld, iy = (int)o->y.ld;
    char *x = (char *)o->x.host + o->x.off * es;
    char *y = o->y.buf ? (char *)o->y.host + o->y.off * es : NULL;
    char *r = o->r.buf ? (char *)o->r.host + o->r.off * es : NULL;
    float fa[2] = { (float)o->alpha.re, (float)o->alpha.im };
    double da[2] = { o->alpha.re, o->alpha.im };
    switch (o->op) {
    case KILN__BLAS_AXPY:
        if (di == 0)
            ((saxpy_fn)fns[AXPY])(n, fa[0], (float *)x, ix, (float *)y, iy);
        else if (di == 1)
            ((daxpy_fn)fns[AXPY + 1])(n, da[0], (double *)x, ix, (double *)y, iy);
        else
            ((caxpy_fn)fns[AXPY + di])(n, di == 2 ? (void *)fa : (void *)da, x, ix, y, iy);
        break;
    case KILN__BLAS_SCAL:
        if (di == 0)
            ((sscal_fn)fns[SCAL])(n, fa[0], (float *)x, ix);
        else if (di == 1)
            ((dscal_fn)fns[SCAL + 1])(n, da[0], (double *)x, ix);
        else
            ((cscal_fn)fns[SCAL + di])(n, di == 2 ? (void *)fa : (void *)da, x, ix);
        break;
    case KILN__BLAS_DOT:
    case KILN__BLAS_DOTC:
        if (di == 0)
            *(float *)r = ((sdot_fn)fns[DOTU])(n, (float *)x, ix, (float *)y, iy);
        else if (di == 1)
            *(double *)r = ((ddot_fn)fns[DOTU + 1])(n, (double *)x, ix, (double *)y, iy);
        else
            ((cdot_fn)fns[(o->op == KILN__BLAS_DOTC ? DOTC - 2 : DOTU) + di])(n, x, ix, y, iy, r);
        break;
    default: /* nrm2: a real result, r is of the parts' dtype */
        r = (char *)o->r.host + o->r.off * (es / (di >= 2 ? 2 : 1));
        if (di == 0 || di == 2)
            *(float *)r = ((snrm2_fn)fns[NRM2 + di])(n, x, ix);
        else
            *(double *)r = ((dnrm2_fn)fns[NRM2 + di])(n, x, ix);
        break;
    }
    return KILN_OK;
}

const kiln__blas_provider kiln__blas_openblas = {
    .name = "OpenBLAS",
    .host = 1,
    .has_dtype = has_dtype,
    .load = load,
    .gemm = gemm,
    .level1 = level1,
};
