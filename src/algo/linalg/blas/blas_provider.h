/* The BLAS providers (one file per library) behind kiln's BLAS calls
 * (blas.c). blas.c turns kiln's arrays (row-major, strided, batched) into
 * column-major BLAS operands and picks the provider of the queue's device;
 * a provider only calls its library. Offsets, leading dimensions, strides
 * and increments are in elements. */
#ifndef KILN_ALGO_BLAS_PROVIDER_H
#define KILN_ALGO_BLAS_PROVIDER_H

#include "algo/linalg/linalg_lib.h"

typedef struct kiln__blas_mat {
    kiln_buffer *buf;
    size_t off, ld, bstride; /* bstride: between batch items (may be 0) */
    void *host;              /* host providers: the mapped buffer's first byte */
} kiln__blas_mat;

/* A scalar factor as the providers take it: real and imaginary parts
 * (kiln_blas_*'s kiln_arg, checked against the operands' dtype). */
typedef struct kiln__blas_scalar {
    double re, im;
} kiln__blas_scalar;
#define KILN__BLAS_SCALAR(re) ((kiln__blas_scalar){ (re), 0.0 })

/* c[i] = alpha * op(a[i]) op(b[i]) + beta * c[i], column-major, i < batch;
 * op: 0 none, 1 transpose, 2 conjugate transpose. */
typedef struct kiln__blas_gemm {
    kiln_dtype dtype;
    int ta, tb;
    size_t m, n, k, batch;
    kiln__blas_scalar alpha, beta;
    kiln__blas_mat a, b, c;
} kiln__blas_gemm;

enum { KILN__BLAS_AXPY, KILN__BLAS_SCAL, KILN__BLAS_DOT, KILN__BLAS_DOTC, KILN__BLAS_NRM2 };
/* y = alpha*x + y; x = alpha*x; r[0] = x.y, conj(x).y, |x|_2. The vectors
 * use .ld as their (positive) increment. */
typedef struct kiln__blas_l1 {
    int op;
    kiln_dtype dtype;
    size_t n;
    kiln__blas_scalar alpha;
    kiln__blas_mat x, y, r;
} kiln__blas_l1;

/* A provider registers for the devices it serves by their capability
 * fields, never by their backend's name (blas.c's list, in order of
 * preference; kiln__lib_serves): `languages` (kiln_language bits, one of
 * which the device must compile: the native library's queue comes from
 * that backend's interop) and `host` (a host library: CPU devices, whose
 * buffers the host maps zero-copy or reads). */
typedef struct kiln__blas_provider {
    const char *name;
    unsigned languages;
    int host; /* 1: runs on host pointers inside a host task (q is NULL) */
    /* 1 if it computes dtype on q's device (KILN_ERROR_* set otherwise) */
    int (*has_dtype)(kiln_queue *q, kiln_dtype dtype);
    /* Loads the library: KILN_ERROR_NO_RUNTIME naming the package. */
    kiln_status (*load)(void);
    /* Enqueue on q (native providers) or run now (host providers). */
    kiln_status (*gemm)(kiln_queue *q, const kiln__blas_gemm *g);
    kiln_status (*level1)(kiln_queue *q, const kiln__blas_l1 *o);
} kiln__blas_provider;

extern const kiln__blas_provider kiln__blas_clblast;
extern const kiln__blas_provider kiln__blas_openblas;
#if KILN_HAVE_CUDA
extern const kiln__blas_provider kiln__blas_cublas;
#endif

/* Element size and the dtype's index among float32, float64, complex64,
 * complex128, float16 (0..4; -1 for others): the providers' tables. */
int kiln__blas_dtype_index(kiln_dtype d);

#endif
